import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { fingerprintOf, hashKey } from '../../../src/auth/key-material.js';
import { addKey, hasKeys } from '../../../src/auth/key-admin.js';
import type { ChargeRequest } from '../../../src/auth/key-store.js';
import { licenceFromOptions } from '../../../src/auth/licence.js';
import { SqliteKeyStore } from '../../../src/auth/stores/sqlite-key-store.js';

const T = 1_704_067_200;
let dir: string;
let store: SqliteKeyStore;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-store-'));
});

afterEach(() => {
  store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('SqliteKeyStore', () => {
  it('hasKeys is false without a store and does not create one', async () => {
    expect(await hasKeys({ kind: 'sqlite', dataDir: dir })).toBe(false);
    expect(existsSync(path.join(dir, 'keys.sqlite'))).toBe(false);
    await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'unlimited' } });
    expect(await hasKeys({ kind: 'sqlite', dataDir: dir })).toBe(true);
  });

  it('round-trips every licence field', async () => {
    const key = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'block', limit: 600 }, expires: T, resultsMax: 256, offsetMax: 3000,
      burst: { size: 5, windowSec: 360 }, maxConcurrent: 4, timeFenceAfter: -86_400, timeFenceBefore: T, private: true,
      allowCidrs: ['10.0.0.0/8', '::1'], v2: false });
    store = SqliteKeyStore.open(dir);
    const h = hashKey(key);
    const lic = store.findLicence(h)!;
    expect({ ...lic, keyHash: lic.keyHash.toString('hex'), created: 0 }).toEqual({
      keyHash: h.toString('hex'), fingerprint: fingerprintOf(h), created: 0, quotaKind: 'block', quotaLimit: 600, expires: T,
      resultsMax: 256, offsetMax: 3000, burstSize: 5, burstWindowSec: 360, maxConcurrent: 4, timeFenceAfter: -86_400,
      timeFenceBefore: T, private: true, allowCidrs: ['10.0.0.0/8', '::1'], v2: false, revoked: undefined,
    });
    expect(store.findLicence(hashKey('ffffffffffffffff'))).toBeUndefined();
  });

  it('decides a batch request by request against one read of the row, and writes it once', async () => {
    const key = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'block', limit: 3 } });
    store = SqliteKeyStore.open(dir);
    const lic = store.findLicence(hashKey(key))!;
    // A second copy of the same licence (a cache reload mid-batch) must share the row, not overwrite it.
    const copy = store.findLicence(hashKey(key))!;
    expect(copy).not.toBe(lic);
    const unknown = { ...lic, keyHash: hashKey('eeeeeeeeeeeeeeee') };
    const reqs: ChargeRequest[] = [
      { licence: lic, endpoint: 'lookup' }, { licence: copy, endpoint: 'flex' }, { licence: unknown, endpoint: 'flex' },
      { licence: lic, endpoint: 'summarize' }, { licence: copy, endpoint: 'lookup' },
    ];
    expect(store.chargeBatch(reqs, T)).toEqual([
      { ok: true, periodUsed: 1 }, { ok: true, periodUsed: 2 }, { ok: false, code: 'BAD_API_KEY' },
      { ok: true, periodUsed: 3 }, { ok: false, code: 'RATE_LIMITED' },
    ]);
    expect(store.record(hashKey(key))!.usage).toEqual({ periodStart: 0, periodUsed: 3, totalUsed: 3, lastUsed: T, burstLog: [] });
  });

  it('re-reads revocation inside the charge, whatever the caller cached', async () => {
    const key = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'daily', limit: 3 } });
    store = SqliteKeyStore.open(dir);
    const lic = store.findLicence(hashKey(key))!;
    expect(store.revoke(hashKey(key), T)).toBe(true);
    expect(store.revoke(hashKey(key), T + 5)).toBe(true);
    expect(store.findLicence(hashKey(key))!.revoked).toBe(T);
    expect(store.chargeBatch([{ licence: lic, endpoint: 'flex' }], T)).toEqual([{ ok: false, code: 'BAD_API_KEY' }]);
    expect(store.revoke(hashKey('dddddddddddddddd'), T)).toBe(false);
  });

  it('keeps the burst log across transactions and clears it on reset', async () => {
    const key = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'unlimited' }, burst: { size: 2, windowSec: 10 } });
    store = SqliteKeyStore.open(dir);
    const lic = store.findLicence(hashKey(key))!;
    const one = [{ licence: lic, endpoint: 'lookup' }] as const;
    expect(store.chargeBatch(one, T + 0.5)[0]!.ok).toBe(true);
    expect(store.chargeBatch(one, T + 1.25)[0]!.ok).toBe(true);
    expect(store.chargeBatch(one, T + 2)[0]).toEqual({ ok: false, code: 'RATE_LIMITED' });
    expect(store.record(hashKey(key))!.usage.burstLog).toEqual([T + 0.5, T + 1.25]);
    expect(store.chargeBatch(one, T + 10.5)[0]!.ok).toBe(true);
    expect(store.resetUsage(hashKey(key))).toBe(true);
    expect(store.record(hashKey(key))!.usage).toEqual({ periodStart: 0, periodUsed: 0, totalUsed: 0, lastUsed: undefined, burstLog: [] });
    expect(store.resetUsage(hashKey('dddddddddddddddd'))).toBe(false);
  });

  it('adds unmetered usage in one transaction', async () => {
    const a = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'unlimited' } });
    const b = await addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'unlimited' } });
    store = SqliteKeyStore.open(dir);
    store.addUnmeteredUsage(new Map([[hashKey(a).toString('hex'), 5], [hashKey(b).toString('hex'), 2]]), T + 0.9);
    store.addUnmeteredUsage(new Map([[hashKey(a).toString('hex'), 1]]), T - 100);
    expect(store.record(hashKey(a))!.usage).toMatchObject({ totalUsed: 6, lastUsed: T });
    expect(store.record(hashKey(b))!.usage).toMatchObject({ totalUsed: 2, lastUsed: T });
  });

  it('refuses a second insert of the same key', async () => {
    const h = hashKey('cccccccccccccccc');
    store = SqliteKeyStore.open(dir);
    const lic = licenceFromOptions({ quota: { kind: 'unlimited' } }, h, fingerprintOf(h), T);
    store.insert(lic);
    expect(() => store.insert(lic)).toThrow(`--key: a key with fingerprint ${fingerprintOf(h)} already exists`);
    expect(store.list().map((r) => r.licence.fingerprint)).toEqual([fingerprintOf(h)]);
  });
});
