// The schema of keys.sqlite and how a file of an earlier version is brought
// up to it: ordered migrations, applied when a store is opened, so that an
// upgrade keeps every key, its usage and its licence.
//
// The version lives in meta.schema_version (TEXT), where the first release
// put it. Keeping it there, rather than moving to PRAGMA user_version, is
// what makes a downgrade safe: every release so far refuses a file whose
// schema_version is not its own, so an older build started on a migrated
// file stops with "key store schema version N; this build reads version M"
// instead of misreading rows it does not understand.
//
// Versions, found with `git log -p -- src/auth/stores/sqlite-key-store.ts
// src/auth/sqlite-key-store.ts` (the file's first home):
//   0  no tables: a store being created (open() creates the file before its
//      first transaction; a process killed in between leaves it empty).
//   1  de019a7 (2026-11-22) to this day: tables meta and keys. The store
//      moved to stores/ (e2ec81a) and gained refunds (a00ab36) without a
//      change to its tables or to what their values mean (the key hash, the
//      burst log's encoding and the quota periods are as de019a7 wrote them).
//
// Contract: migrateKeyStore(db, file) runs in ONE `BEGIN IMMEDIATE`
// transaction: it reads the version, refuses a newer one (or one that is not
// a number) with KeyStoreVersionError and changes nothing, applies every
// migration above the version in order, records the last one's version and
// commits; a migration that throws rolls all of it back, leaving the file as
// it was. Two processes opening one file at once (`serve --processes N`, a
// `keys` command beside a server) are serialised by SQLite's write lock: the
// second waits (the busy timeout), then reads the version the first
// committed and has nothing left to do.
//
// Changing the schema: append a Migration with the next version, its reason
// in a comment and its DDL/DML, never edit one that shipped (files in the
// field were made by it); a migration must run inside a transaction (no
// VACUUM, no PRAGMA journal_mode), and keep every row. Then generate the
// fixture of the release before the change (test/fixtures/upgrade/README.md)
// so that test/integration/upgrade.test.ts keeps opening its files.

import type Database from 'better-sqlite3';
import { KeyStoreVersionError } from '../../errors/catalogue.js';

export interface Migration {
  /** The version the file has once this migration ran; one more than the previous migration's. */
  readonly to: number;
  /** Why the schema changed, for the log line of a migration. */
  readonly why: string;
  /** Changes the tables; runs inside the migration transaction, with every earlier migration applied. */
  up(db: Database.Database): void;
}

/** What migrateKeyStore found and did. from === to: the file was current. */
export interface MigrationOutcome {
  readonly from: number;
  readonly to: number;
}

/** The version 1 tables, exactly as de019a7 created them (files in the field hold this). */
const V1_TABLES = `
CREATE TABLE IF NOT EXISTS meta (
  name  TEXT PRIMARY KEY,
  value TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS keys (
  key_hash       BLOB PRIMARY KEY CHECK (length(key_hash) = 32),
  fingerprint    TEXT NOT NULL,
  created        INTEGER NOT NULL,
  quota_kind     TEXT NOT NULL CHECK (quota_kind IN ('unlimited', 'daily', 'hourly', 'block')),
  quota_limit    INTEGER,
  expires        INTEGER,
  results_max    INTEGER NOT NULL,
  offset_max     INTEGER,
  burst_size     INTEGER,
  burst_window   INTEGER,
  max_concurrent INTEGER,
  fence_after    INTEGER,
  fence_before   INTEGER,
  private        INTEGER NOT NULL,
  allow_cidrs    TEXT NOT NULL,
  v2             INTEGER NOT NULL,
  revoked        INTEGER,
  period_start   INTEGER NOT NULL DEFAULT 0,
  period_used    INTEGER NOT NULL DEFAULT 0,
  total_used     INTEGER NOT NULL DEFAULT 0,
  last_used      INTEGER,
  burst_log      BLOB
) WITHOUT ROWID;
`;

/** Every migration, oldest first. */
export const MIGRATIONS: readonly Migration[] = Object.freeze([
  {
    // One table for licence and counters: a charge reads and writes one row,
    // so the licence (revocation, expiry) is re-read in the same transaction
    // as the counters. Keys are stored as sha256 hashes only.
    to: 1,
    why: 'a new store: the tables meta and keys',
    up: (db: Database.Database) => db.exec(V1_TABLES),
  },
]);

/** The version this build writes and reads: the last migration's. */
export const KEY_STORE_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.to;

/** The file's version: 0 without a meta table (a store being created), else meta.schema_version as stored. */
function storedVersion(db: Database.Database): string {
  const hasMeta = db.prepare("SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = 'meta'").get() !== undefined;
  if (!hasMeta) return '0';
  const value = db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").pluck().get() as string | undefined;
  return value ?? '0';
}

/**
 * Brings `db` (the store at `file`, for messages) up to the last of
 * `migrations` in one IMMEDIATE transaction; see the module comment.
 * `migrations` is for tests; the store always passes MIGRATIONS.
 */
export function migrateKeyStore(db: Database.Database, file: string,
  migrations: readonly Migration[] = MIGRATIONS): MigrationOutcome {
  const newest = migrations[migrations.length - 1]!.to;
  return db.transaction((): MigrationOutcome => {
    const found = storedVersion(db);
    if (!/^[0-9]+$/.test(found) || Number(found) > newest) throw new KeyStoreVersionError(file, found, newest);
    const from = Number(found);
    let at = from;
    for (const m of migrations) {
      if (m.to <= at) continue;
      // A gap would mean a migration list edited out of order: a bug, not a file to refuse.
      if (m.to !== at + 1) throw new Error(`key store migrations: version ${at} is followed by ${m.to}`);
      m.up(db);
      at = m.to;
    }
    if (at !== from) {
      db.prepare("INSERT INTO meta (name, value) VALUES ('schema_version', ?) ON CONFLICT (name) DO UPDATE SET value = excluded.value")
        .run(String(at));
    }
    return { from, to: at };
  }).immediate();
}
