// The gate's cache by the key as the client sent it (access-gate.ts identify):
// a key seen lately skips canonicalising and SHA-256. Regression test for a
// bug of issue 22's first cut: once the licence cache had refreshed the key
// (every licenceCacheTtlMs), the one-entry cache of the last key held the old
// entry and every later request of that key was hashed again.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { AccessGate } from '../../../src/auth/access-gate.js';
import { addKey } from '../../../src/auth/key-admin.js';
import { sqliteKeyStoreConfig } from '../../../src/auth/stores/open-key-store.js';

const hashed = vi.hoisted(() => ({ count: 0 }));
vi.mock('../../../src/auth/key-material.js', async (original) => {
  const m = await original<typeof import('../../../src/auth/key-material.js')>();
  return { ...m, hashKey: (k: string) => { hashed.count++; return m.hashKey(k); } };
});

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-rawkey-'));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

it('hashes a key again only when its licence is read again, not for every request after a refresh', async () => {
  const config = sqliteKeyStoreConfig(dir);
  const key = await addKey(config, { quota: { kind: 'unlimited' } });
  const ttlMs = 20;
  const gate = AccessGate.open(config, { licenceCacheTtlMs: ttlMs });
  try {
    hashed.count = 0;
    const started = Date.now();
    let requests = 0;
    while (Date.now() - started < 10 * ttlMs) {
      // A new string each time, as uWS hands over.
      for (let i = 0; i < 20; i++, requests++) await gate.authenticate(` ${key}`.slice(1), '127.0.0.1', 'lookup');
      await new Promise((r) => setTimeout(r, 2));
    }
    expect(requests).toBeGreaterThan(100);
    // One hash per refresh of the licence (about every ttlMs), whatever the number of requests.
    expect(hashed.count).toBeLessThanOrEqual((Date.now() - started) / ttlMs + 3);
  } finally {
    gate.close();
  }
});
