// SqliteKeyStore: the KeyStore contract, opened through the factory as the
// gate and the CLI open it, then what only SQLite has: a file in the data
// directory, created on demand with mode 0600, with a schema version.

import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { addKey, hasKeys } from '../../../src/auth/key-admin.js';
import { hashKey } from '../../../src/auth/key-material.js';
import { openExistingKeyStore, openKeyStore } from '../../../src/auth/stores/open-key-store.js';
import type { KeyStoreConfig } from '../../../src/auth/stores/open-key-store.js';
import { SqliteKeyStore } from '../../../src/auth/stores/sqlite-key-store.js';
import { describeKeyStoreContract } from './key-store-contract.js';

describeKeyStoreContract('SqliteKeyStore', () => {
  const config: KeyStoreConfig = { kind: 'sqlite', dataDir: mkdtempSync(path.join(os.tmpdir(), 'rrscan-store-contract-')) };
  return {
    store: openKeyStore(config),
    openPeer: () => openKeyStore(config),
    dispose: () => rmSync(config.dataDir, { recursive: true, force: true }),
  };
});

describe('SqliteKeyStore: the file', () => {
  let dir: string;
  let config: KeyStoreConfig;

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-store-'));
    config = { kind: 'sqlite', dataDir: dir };
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
  });

  it('is what openKeyStore opens for kind sqlite', () => {
    const store = openKeyStore(config);
    try {
      expect(store).toBeInstanceOf(SqliteKeyStore);
    } finally {
      store.close();
    }
  });

  it('hasKeys and openExistingKeyStore never create it; addKey does, mode 0600, in a directory it creates', async () => {
    const nested = path.join(dir, 'a', 'b');
    expect(await hasKeys({ kind: 'sqlite', dataDir: nested })).toBe(false);
    expect(openExistingKeyStore({ kind: 'sqlite', dataDir: nested })).toBeUndefined();
    expect(existsSync(nested)).toBe(false);
    const key = await addKey({ kind: 'sqlite', dataDir: nested }, { quota: { kind: 'unlimited' } });
    const file = path.join(nested, 'keys.sqlite');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(await hasKeys({ kind: 'sqlite', dataDir: nested })).toBe(true);
    const store = openExistingKeyStore({ kind: 'sqlite', dataDir: nested })!;
    try {
      expect((await store.record(hashKey(key)))!.usage.totalUsed).toBe(0);
    } finally {
      store.close();
    }
  });

  it('refuses a file of a newer schema version, naming both (older ones migrate: key-store-schema.test.ts)', () => {
    SqliteKeyStore.open(dir).close();
    const db = new Database(path.join(dir, 'keys.sqlite'));
    db.prepare("UPDATE meta SET value = '2' WHERE name = 'schema_version'").run();
    db.close();
    expect(() => SqliteKeyStore.open(dir)).toThrow(`${path.join(dir, 'keys.sqlite')}: key store schema version 2 is newer than ` +
      'this build reads (1 at most)');
  });

  it('rejects an unknown kind at run time', () => {
    expect(() => openKeyStore({ kind: 'etcd', url: 'http://x' } as unknown as KeyStoreConfig)).toThrow('unknown key store kind "etcd"');
  });
});
