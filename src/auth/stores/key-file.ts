// Opening DIR/keys.sqlite with the -wal and -shm files that belong to it.
//
// Why this exists: SQLite pairs a database with its write-ahead log and
// shared-memory index by NAME (keys.sqlite-wal, keys.sqlite-shm) and records
// nothing in them about which database they belong to. When an operator
// moves another store over keys.sqlite while a server has it open, the
// server's connection keeps the old file, and when it closes it leaves the
// old -wal and -shm behind on purpose (SQLite will not checkpoint or delete
// them for a database that has moved). The next connection to open the path
// (a reopen, a restarted server, `rrscan keys list`) then reads the NEW file
// through the OLD log: measured with SQLite 3.53, the replaced store's keys
// came back, the new one's were gone, and writes would mix both. The same
// holds after a delete and a restore, and across `serve --processes N`,
// whose members share the -shm while some of them still have the old file.
//
// So every open of keys.sqlite by rrscan goes through openKeyFile, which
// holds an flock on keys.sqlite.open.lock while it opens, and keeps in that
// file which database the -wal and -shm at the path were made for:
//   {"db":"dev:ino","-wal":"dev:ino","-shm":"dev:ino"}
// An open that finds a different database at the path than the record names
// deletes the -wal and -shm the record names (those exact files, by
// identity; any others are left alone) before SQLite sees them: they hold
// the old store's uncheckpointed writes, which no reader of the new store
// must see. Processes still reading the old file keep their open
// descriptors, and when they notice the change (sqlite-key-store.ts) they
// do the same at once (releaseKeyFile), before they let go of the old file.
// That order matters because identities are device and inode only: once no
// process holds the old file its inode number may be handed to the next
// file created at the path, which the record would then take for the old
// one. (Birth time would tell them apart, but where statx is missing or
// filtered Node reports the change time instead, which moves with every
// write.) The lock makes "look at the record, delete, open, record" one
// step among rrscan's processes; other programs (the sqlite3 shell) do not
// take it, and what they create is trusted as before.
//
// Contract: openKeyFile(file, {create, wait}) answers the open connection
// (WAL mode, migrated by key-store-schema.ts) and the identity of the file it
// read, or 'missing' (no file and create is false), or 'busy' (another
// process holds the lock and wait is false). With wait it waits up to
// LIMITS.keyStoreOpenLockWaitMs and then throws. Errors of SQLite and of the
// migration (KeyStoreVersionError) pass through, with nothing opened.

import Database from 'better-sqlite3';
import { openSync, closeSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { LIMITS } from '../../config/limits.js';
import { FileLock } from '../../shard/file-lock.js';
import { migrateKeyStore, type MigrationOutcome } from './key-store-schema.js';
import { hasCode } from '../../errors/catalogue.js';

export interface OpenedKeyFile {
  readonly db: Database.Database;
  /** fileIdentity of the file `db` reads, taken while the lock was held. */
  readonly identity: string;
  readonly migrated: MigrationOutcome;
}

/** The lock and record beside a store file. */
export function openLockFileOf(file: string): string {
  return `${file}.open.lock`;
}

const SIDECARS = ['-wal', '-shm'] as const;

/** Which database the -wal and -shm at the path were made for, and their own identities. */
interface PairingRecord {
  db: string;
  '-wal'?: string;
  '-shm'?: string;
}

/** "dev:ino" of the file at `file`, or undefined when nothing is there. */
export function fileIdentity(file: string): string | undefined {
  try {
    const st = statSync(file, { bigint: true });
    return `${st.dev}:${st.ino}`;
  } catch (err) {
    if (hasCode(err, 'ENOENT', 'ENOTDIR')) return undefined;
    throw err;
  }
}

const sleeper = new Int32Array(new SharedArrayBuffer(4));

function takeLock(file: string, wait: boolean): FileLock | undefined {
  const lockFile = openLockFileOf(file);
  const deadline = Date.now() + LIMITS.keyStoreOpenLockWaitMs;
  for (;;) {
    const lock = FileLock.tryAcquire(lockFile);
    if (lock !== undefined || !wait) return lock;
    if (Date.now() > deadline) {
      throw new Error(`${lockFile}: another process has been opening the key store for over ${LIMITS.keyStoreOpenLockWaitMs} ms`);
    }
    // Opens are synchronous (the CLI, a server starting); the holder needs milliseconds.
    Atomics.wait(sleeper, 0, 0, LIMITS.keyStoreOpenLockPollMs);
  }
}

function readRecord(file: string): PairingRecord | undefined {
  try {
    const parsed = JSON.parse(readFileSync(openLockFileOf(file), 'utf8')) as unknown;
    if (typeof parsed === 'object' && parsed !== null && typeof (parsed as { db?: unknown }).db === 'string') {
      return parsed as PairingRecord;
    }
  } catch {
    // Empty (a new lock file, or a full disk when it was written) or not ours: no record, nothing to delete.
  }
  return undefined;
}

/** Deletes the -wal and -shm the record names when the record was made for another database than `current` (none: undefined). */
function removeStaleSidecars(file: string, record: PairingRecord | undefined, current: string | undefined): void {
  if (record === undefined || record.db === current) return;
  for (const suffix of SIDECARS) {
    const recorded = record[suffix];
    if (recorded !== undefined && fileIdentity(file + suffix) === recorded) {
      try {
        unlinkSync(file + suffix);
      } catch (err) {
        if (!hasCode(err, 'ENOENT')) throw err;
      }
    }
  }
}

/**
 * Called by a process whose store file `identity` is no longer at the path
 * (replaced or deleted), while it still holds it open: deletes the -wal and
 * -shm the record says were made for it, and the record, so that no later
 * file at the path is read through them. Best effort and never waits: when
 * another process holds the lock, that process is opening the store and
 * applies the record itself (the old file, still held, cannot lend its
 * inode number to the new one meanwhile).
 */
export function releaseKeyFile(file: string, identity: string): void {
  const lock = takeLock(file, false);
  if (lock === undefined) return;
  try {
    const record = readRecord(file);
    if (record?.db !== identity || fileIdentity(file) === identity) return;
    removeStaleSidecars(file, record, undefined);
    lock.note('');
  } finally {
    lock.release();
  }
}

function createIfMissing(file: string): void {
  try {
    // 0600: SQLite gives the -wal and -shm files the database's mode. 'wx' never opens an existing
    // file: closing a descriptor of a file this process has open in SQLite would drop SQLite's locks on it.
    closeSync(openSync(file, 'wx', 0o600));
  } catch (err) {
    if (!hasCode(err, 'EEXIST')) throw err;
  }
}

/** Opens the store at `file`; see the module comment. */
export function openKeyFile(file: string, opts: { create: boolean; wait: boolean }): OpenedKeyFile | 'missing' | 'busy' {
  const lock = takeLock(file, opts.wait);
  if (lock === undefined) return 'busy';
  try {
    // A file replaced while it was being opened is opened again (a second time is as good as a loop:
    // an operator does not replace it twice within a millisecond, and a server's next check catches it).
    for (let attempt = 0; ; attempt++) {
      if (opts.create) createIfMissing(file);
      const before = fileIdentity(file);
      if (before === undefined) return 'missing';
      removeStaleSidecars(file, readRecord(file), before);
      const db = new Database(file, { timeout: LIMITS.keyStoreBusyTimeoutMs, fileMustExist: true });
      let migrated: MigrationOutcome;
      try {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = NORMAL');
        // An older file is migrated forward (keys, usage and licences kept); a newer one is refused untouched.
        migrated = migrateKeyStore(db, file);
      } catch (err) {
        db.close();
        throw err;
      }
      if (fileIdentity(file) !== before) {
        db.close();
        if (attempt === 0) continue;
        throw new Error(`${file} was replaced twice while it was being opened`);
      }
      // SQLite has the -wal and -shm open now (the pragma read the file): record whose they are.
      const record: PairingRecord = { db: before };
      for (const suffix of SIDECARS) {
        const id = fileIdentity(file + suffix);
        if (id !== undefined) record[suffix] = id;
      }
      lock.note(JSON.stringify(record) + '\n');
      return { db, identity: before, migrated };
    }
  } finally {
    lock.release();
  }
}
