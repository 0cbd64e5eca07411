// SqliteKeyStore: the KeyStore contract, opened through the factory as the
// gate and the CLI open it, then what only SQLite has: a file in the data
// directory, created on demand with mode 0600, with a schema version, that
// an operator may replace, delete or restore under a running server.

import Database from 'better-sqlite3';
import { existsSync, mkdtempSync, renameSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { addKey, hasKeys } from '../../../src/auth/key-admin.js';
import type { KeyStoreNotice } from '../../../src/auth/key-store.js';
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

describe('SqliteKeyStore: a file replaced, deleted or restored under it', () => {
  let dir: string;
  let other: string;
  let file: string;
  const OLD_KEY = '0123456789abcdef0123456789abcdef';
  const NEW_KEY = 'fedcba9876543210fedcba9876543210';
  const OLD = hashKey(OLD_KEY);
  const NEW = hashKey(NEW_KEY);

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-replace-'));
    other = mkdtempSync(path.join(os.tmpdir(), 'rrscan-replace-other-'));
    file = path.join(dir, 'keys.sqlite');
  });

  afterEach(() => {
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  });

  /** A store holding only `key`, made in the other directory as `rrscan keys add --data OTHER` would, moved over DIR/keys.sqlite. */
  async function moveInStoreWith(key: string): Promise<void> {
    rmSync(path.join(other, 'keys.sqlite'), { force: true });
    await addKey({ kind: 'sqlite', dataDir: other }, { key, quota: { kind: 'block', limit: 10 } });
    renameSync(path.join(other, 'keys.sqlite'), file);
  }

  /** A store with OLD_KEY, charged enough that its -wal holds writes no checkpoint has copied yet. */
  async function storeWithOldKey(): Promise<SqliteKeyStore> {
    await addKey({ kind: 'sqlite', dataDir: dir }, { key: OLD_KEY, quota: { kind: 'block', limit: 1000 } });
    const store = SqliteKeyStore.open(dir);
    const licence = store.findLicence(OLD)!;
    for (let i = 0; i < 20; i++) store.chargeBatch([{ licence, endpoint: 'lookup' }], 1_700_000_000 + i);
    return store;
  }

  function waitFor(notices: KeyStoreNotice[], count: number): Promise<void> {
    const deadline = Date.now() + LIMITS.keyStoreCheckMs * 3;
    return new Promise((resolve, reject) => {
      const poll = (): void => {
        if (notices.length >= count) return resolve();
        if (Date.now() > deadline) return reject(new Error(`${notices.length} notices, waited for ${count}: ${JSON.stringify(notices)}`));
        setTimeout(poll, 5);
      };
      poll();
    });
  }

  it('a process opening the path after a move reads the new file, not the old one through its -wal', async () => {
    // Another process still has the old store open (it has not noticed yet, or was killed before it could)
    // when this one opens the path: the -wal and -shm there are the old store's, with writes no checkpoint
    // copied. Opened naively, the path showed OLD_KEY and not NEW_KEY.
    const old = await storeWithOldKey();
    await moveInStoreWith(NEW_KEY);
    expect(existsSync(`${file}-wal`)).toBe(true);
    const store = SqliteKeyStore.open(dir);
    try {
      expect(store.findLicence(OLD)).toBeUndefined();
      expect(store.findLicence(NEW)!.quotaLimit).toBe(10);
      expect(store.list().map((r) => r.licence.fingerprint)).toEqual([NEW.toString('hex').slice(0, 12)]);
      // The old process lets go of its file afterwards; that touches nothing the new store uses.
      old.close();
      const licence = store.findLicence(NEW)!;
      expect(store.chargeBatch([{ licence, endpoint: 'flex' }], 1_800_000_000)).toEqual([{ ok: true, periodUsed: 1 }]);
    } finally {
      old.close();
      store.close();
    }
    const again = SqliteKeyStore.open(dir);
    try {
      expect(again.record(NEW)!.usage.totalUsed).toBe(1);
      expect(again.findLicence(OLD)).toBeUndefined();
    } finally {
      again.close();
    }
    const db = new Database(file);
    try {
      expect(db.pragma('integrity_check')).toEqual([{ integrity_check: 'ok' }]);
    } finally {
      db.close();
    }
  });

  it('a store closed after its file was replaced (a `keys` command, a server stopping) leaves no -wal behind', async () => {
    // SQLite closes a moved database without checkpointing or deleting its -wal; before, the next open of the
    // path (the server started again) read the new file through it and served the old keys.
    const old = await storeWithOldKey();
    await moveInStoreWith(NEW_KEY);
    old.close();
    expect([existsSync(`${file}-wal`), existsSync(`${file}-shm`)]).toEqual([false, false]);
    const store = SqliteKeyStore.open(dir);
    try {
      expect(store.findLicence(OLD)).toBeUndefined();
      expect(store.findLicence(NEW)!.quotaLimit).toBe(10);
    } finally {
      store.close();
    }
  });

  it('a watching store reopens a replaced file: new keys known, old ones gone, reported once', async () => {
    const store = await storeWithOldKey();
    const notices: KeyStoreNotice[] = [];
    store.watch((n) => notices.push(n));
    try {
      await moveInStoreWith(NEW_KEY);
      await waitFor(notices, 1);
      expect(notices).toEqual([{
        kind: 'reopened',
        message: `${file} was replaced under the running server (another file at its path); reopened: its keys are served from now on`,
      }]);
      expect(store.findLicence(OLD)).toBeUndefined();
      const licence = store.findLicence(NEW)!;
      expect(store.chargeBatch([{ licence, endpoint: 'flex' }], 1_800_000_000)).toEqual([{ ok: true, periodUsed: 1 }]);
    } finally {
      store.close();
    }
    // The charge went to the new file, where every other process finds it.
    const peer = SqliteKeyStore.open(dir);
    try {
      expect(peer.record(NEW)!.usage.totalUsed).toBe(1);
    } finally {
      peer.close();
    }
  });

  it('a deleted file fails closed (OVERLOADED) until a file is back, each change reported once', async () => {
    const store = await storeWithOldKey();
    const notices: KeyStoreNotice[] = [];
    store.watch((n) => notices.push(n));
    try {
      const backup = path.join(other, 'backup.sqlite');
      // What an operator's restore needs: a copy taken with SQLite's own backup, -wal included.
      await store.record(OLD);
      const copy = new Database(file, { readonly: true });
      await copy.backup(backup);
      copy.close();
      expect(existsSync(`${file}-wal`)).toBe(true);
      rmSync(file);
      await waitFor(notices, 1);
      // Its -wal and -shm went with it, before the store let go of the file (so a file created at the path
      // later, even one given the old inode number, is never read through them).
      expect([existsSync(`${file}-wal`), existsSync(`${file}-shm`)]).toEqual([false, false]);
      expect(notices[0]).toEqual({
        kind: 'unavailable',
        message: `${file} was deleted under the running server; data requests get 503 until it is restored ` +
          '(or `rrscan keys add` creates a new store)',
      });
      let caught: unknown;
      try {
        store.findLicence(OLD);
      } catch (err) {
        caught = err;
      }
      expect((caught as { code?: unknown }).code).toBe('OVERLOADED');
      expect(() => store.chargeBatch([], 0)).toThrow('Error: Server is overloaded, try again later (key store unavailable)');
      // Several checks later, still one notice.
      await new Promise((r) => setTimeout(r, LIMITS.keyStoreCheckMs * 1.5));
      expect(notices.length).toBe(1);
      renameSync(backup, file);
      await waitFor(notices, 2);
      expect(notices[1]).toEqual({
        kind: 'reopened',
        message: `${file} can be read again (${notices[0]!.message}); serving its keys`,
      });
      expect(store.record(OLD)!.usage.totalUsed).toBe(20);
    } finally {
      store.close();
    }
  });

  it('a file it cannot open (from a newer release) fails closed, saying why, until a good one replaces it', async () => {
    const store = await storeWithOldKey();
    const notices: KeyStoreNotice[] = [];
    store.watch((n) => notices.push(n));
    try {
      await addKey({ kind: 'sqlite', dataDir: other }, { key: NEW_KEY, quota: { kind: 'block', limit: 10 } });
      const newer = new Database(path.join(other, 'keys.sqlite'));
      newer.prepare("UPDATE meta SET value = '9' WHERE name = 'schema_version'").run();
      newer.close();
      renameSync(path.join(other, 'keys.sqlite'), file);
      await waitFor(notices, 1);
      expect(notices[0]!.kind).toBe('unavailable');
      expect(notices[0]!.message).toBe(`${file} cannot be opened: ${file}: key store schema version 9 is newer than this build ` +
        'reads (1 at most): it was written by a newer rrscan release; run that release (or a later one), or restore a copy taken ' +
        'before the upgrade; data requests get 503 until it can');
      expect((notices[0]!.err as { code?: unknown }).code).toBe('KEY_STORE_VERSION');
      expect(() => store.hasKeys()).toThrow('Error: Server is overloaded, try again later (key store unavailable)');
      await moveInStoreWith(NEW_KEY);
      await waitFor(notices, 2);
      expect(notices[1]!.kind).toBe('reopened');
      expect(store.findLicence(NEW)!.quotaLimit).toBe(10);
    } finally {
      store.close();
    }
  });
});
