// keys.sqlite migrations (src/auth/stores/key-store-schema.ts): a file of
// every earlier version opens with its rows kept, a newer one is refused
// untouched, a failing migration leaves the file as it was, and two
// processes migrating one file at once apply each migration once.

import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { hashKey } from '../../../src/auth/key-material.js';
import { KEY_STORE_SCHEMA_VERSION, MIGRATIONS, migrateKeyStore } from '../../../src/auth/stores/key-store-schema.js';
import type { Migration } from '../../../src/auth/stores/key-store-schema.js';
import { SqliteKeyStore } from '../../../src/auth/stores/sqlite-key-store.js';
import { transpileAuth } from './child-harness.js';
import type { Transpiled } from './child-harness.js';

// The version 1 tables as de019a7 wrote them, copied here rather than
// imported so that an edit to the shipped migration fails these tests.
const V1_DDL = `
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

const KEY = 'feedfacefeedfacefeedfacefeedface';
const HASH = hashKey(KEY);

/** A version 1 file made with version 1's own SQL, holding one block key with 7 requests used. */
function writeV1(file: string): void {
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(V1_DDL);
  db.prepare("INSERT INTO meta (name, value) VALUES ('schema_version', '1')").run();
  db.prepare(`INSERT INTO keys (key_hash, fingerprint, created, quota_kind, quota_limit, results_max, offset_max,
    private, allow_cidrs, v2, period_used, total_used, last_used) VALUES (?, ?, 1700000000, 'block', 10, 10000, 100000,
    0, '[]', 1, 7, 7, 1700000500)`).run(HASH, HASH.toString('hex').slice(0, 12));
  db.close();
}

function version(file: string): string | undefined {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").pluck().get() as string | undefined;
  } finally {
    db.close();
  }
}

function columns(file: string): string[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare('PRAGMA table_info(keys)').all() as Array<{ name: string }>).map((c) => c.name);
  } finally {
    db.close();
  }
}

let dir: string;
let file: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-schema-'));
  file = path.join(dir, 'keys.sqlite');
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Runs migrateKeyStore on `file` with its own connection. */
function migrate(migrations?: readonly Migration[]): { from: number; to: number } {
  const db = new Database(file);
  try {
    return migrateKeyStore(db, file, migrations);
  } finally {
    db.close();
  }
}

const ADD_NOTE = (db: Database.Database): void => {
  db.exec("ALTER TABLE keys ADD COLUMN note TEXT NOT NULL DEFAULT 'x'");
};

/** The shipped migrations and one more, version 2, adding a column: the shape a real next release's would have. */
function withV2(up: (db: Database.Database) => void = ADD_NOTE): Migration[] {
  return [...MIGRATIONS, { to: 2, why: 'a test column', up }];
}

describe('key store migrations', () => {
  it('this build is at version 1, the only schema in the history so far', () => {
    expect(KEY_STORE_SCHEMA_VERSION).toBe(1);
    expect(MIGRATIONS.map((m) => m.to)).toEqual([1]);
  });

  it('version 0, an empty file (a store being created), gets the version 1 tables', () => {
    writeFileSync(file, '');
    expect(migrate()).toEqual({ from: 0, to: 1 });
    expect(version(file)).toBe('1');
    expect(columns(file)).toEqual([
      'key_hash', 'fingerprint', 'created', 'quota_kind', 'quota_limit', 'expires', 'results_max', 'offset_max', 'burst_size',
      'burst_window', 'max_concurrent', 'fence_after', 'fence_before', 'private', 'allow_cidrs', 'v2', 'revoked', 'period_start',
      'period_used', 'total_used', 'last_used', 'burst_log',
    ]);
  });

  it('a version 1 file made by version 1\'s SQL opens unchanged, its key and usage kept', () => {
    writeV1(file);
    expect(migrate()).toEqual({ from: 1, to: 1 });
    const store = SqliteKeyStore.open(dir);
    try {
      const rec = store.record(HASH)!;
      expect(rec.licence).toMatchObject({ quotaKind: 'block', quotaLimit: 10, resultsMax: 10000, offsetMax: 100000, created: 1700000000 });
      expect(rec.usage).toEqual({ periodStart: 0, periodUsed: 7, totalUsed: 7, lastUsed: 1700000500, burstLog: [] });
    } finally {
      store.close();
    }
  });

  it('a migration runs on an older file, in order, keeping every row', () => {
    writeV1(file);
    expect(migrate(withV2())).toEqual({ from: 1, to: 2 });
    expect(version(file)).toBe('2');
    const db = new Database(file, { readonly: true });
    try {
      expect(db.prepare('SELECT total_used, note FROM keys').all()).toEqual([{ total_used: 7, note: 'x' }]);
    } finally {
      db.close();
    }
    // And from nothing, every migration runs, one after the other.
    rmSync(file);
    writeFileSync(file, '');
    expect(migrate(withV2())).toEqual({ from: 0, to: 2 });
    expect(columns(file).at(-1)).toBe('note');
  });

  it('a migration that fails leaves the file as it was', () => {
    writeV1(file);
    const failing = withV2((db) => {
      db.exec('ALTER TABLE keys ADD COLUMN note TEXT');
      db.exec('UPDATE keys SET total_used = 0');
      throw new Error('disk on fire');
    });
    expect(() => migrate(failing)).toThrow('disk on fire');
    expect(version(file)).toBe('1');
    expect(columns(file)).not.toContain('note');
    const store = SqliteKeyStore.open(dir);
    try {
      expect(store.record(HASH)!.usage.totalUsed).toBe(7);
    } finally {
      store.close();
    }
  });

  it('refuses a file from a newer release, naming the file and both versions, and changes nothing', () => {
    writeV1(file);
    const db = new Database(file);
    db.prepare("UPDATE meta SET value = '2' WHERE name = 'schema_version'").run();
    db.close();
    let caught: unknown;
    try {
      SqliteKeyStore.open(dir);
    } catch (err) {
      caught = err;
    }
    expect((caught as { code?: unknown }).code).toBe('KEY_STORE_VERSION');
    expect((caught as Error).message).toBe(`${file}: key store schema version 2 is newer than this build reads (1 at most): ` +
      'it was written by a newer rrscan release; run that release (or a later one), or restore a copy taken before the upgrade');
    expect(version(file)).toBe('2');
  });

  it('refuses a version that is not a number', () => {
    writeV1(file);
    const db = new Database(file);
    db.prepare("UPDATE meta SET value = 'one' WHERE name = 'schema_version'").run();
    db.close();
    expect(() => migrate()).toThrow(`${file}: key store schema version "one" is not a version this build knows (it reads 0 to 1)`);
  });

  it('a list with a gap is a bug, not a file to refuse', () => {
    writeV1(file);
    expect(() => migrate([...MIGRATIONS, { to: 3, why: 'skips 2', up: () => undefined }]))
      .toThrow('key store migrations: version 1 is followed by 3');
    expect(version(file)).toBe('1');
  });
});

// Two processes open one older file at the same moment (`serve --processes
// 2` after an upgrade). The migration adds a column, which would fail the
// second time ("duplicate column"), and holds its transaction 300 ms so that
// the other process really arrives while it runs.
const CHILD = `
import Database from 'better-sqlite3';
import { MIGRATIONS, migrateKeyStore } from './src/auth/stores/key-store-schema.js';
const file = process.argv[2];
const db = new Database(file, { timeout: 5000 });
db.pragma('journal_mode = WAL');
const slowV2 = { to: 2, why: 'test', up: (d) => {
  d.exec('ALTER TABLE keys ADD COLUMN note TEXT');
  const until = Date.now() + 300;
  while (Date.now() < until);
} };
process.stdout.write('ready\\n');
process.stdin.once('data', () => {
  const outcome = migrateKeyStore(db, file, [...MIGRATIONS, slowV2]);
  db.close();
  process.stdout.write(JSON.stringify(outcome) + '\\n');
  process.exit(0);
});
`;

describe('two processes migrating one file at once', () => {
  let compiled: Transpiled;
  let script: string;

  beforeAll(() => {
    compiled = transpileAuth();
    script = path.join(compiled.root, 'migrate-child.mjs');
    writeFileSync(script, CHILD);
  });

  afterAll(() => {
    compiled?.remove();
  });

  it('one applies the migration, the other waits and finds the file current', async () => {
    writeV1(file);
    const procs = [0, 1].map(() => spawn(process.execPath, [script, file], { stdio: 'pipe' }));
    let ready = 0;
    const outcomes = await Promise.all(procs.map((p) => new Promise<{ from: number; to: number }>((resolve, reject) => {
      let out = '';
      let err = '';
      p.stderr.on('data', (d: Buffer) => { err += d.toString(); });
      p.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out === 'ready\n' && ++ready === procs.length) for (const q of procs) q.stdin.write('go\n');
      });
      p.on('close', (code) => {
        if (code !== 0) return reject(new Error(`child exited ${code}: ${err}`));
        resolve(JSON.parse(out.split('\n')[1]!) as { from: number; to: number });
      });
    })));
    expect(outcomes.sort((a, b) => a.from - b.from)).toEqual([{ from: 1, to: 2 }, { from: 2, to: 2 }]);
    expect(version(file)).toBe('2');
    expect(columns(file).filter((c) => c === 'note')).toEqual(['note']);
  });
});
