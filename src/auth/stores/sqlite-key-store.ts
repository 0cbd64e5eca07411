// KeyStore on SQLite (better-sqlite3), in `<dataDir>/keys.sqlite`.
//
// Why SQLite rather than LMDB: better-sqlite3 is already a dependency (lmdb
// would be a new native module); `BEGIN IMMEDIATE` gives exactly the
// primitive quota charging needs across processes on one machine: one
// writer at a time, reading the committed counters and writing the new ones
// in the same transaction, with other processes waiting on the busy timeout
// rather than failing. In WAL mode with synchronous=NORMAL a commit is in the
// WAL file (the OS page cache) when COMMIT returns, so a crashed or
// `kill -9`ed process never loses a committed charge, yet no commit waits for
// an fsync (only checkpoints do; a power cut may lose the last moments of
// charges, which we accept). LMDB would need a fixed map size chosen up
// front, and its Node binding batches writes asynchronously by default,
// which is the opposite of "committed before the response goes out". And an
// operator can read the file with the sqlite3 shell.
//
// Contract: see KeyStore in ../key-store.ts. All methods are synchronous;
// chargeBatch runs one IMMEDIATE transaction for the whole batch (group
// commit, driven by quota-ledger.ts) and throws SqliteError SQLITE_BUSY when
// another process held the write lock past LIMITS.keyStoreBusyTimeoutMs.
// Keys are stored only as sha256 hashes (key-material.ts). The tables, their
// versions and the migrations that bring an older file up to date are in
// key-store-schema.ts; every open goes through key-file.ts, which pairs the
// file with its own -wal and -shm and migrates it. Once watch() is called
// (a running server), the store notices the file replaced, deleted or
// restored under it (SqliteKeyStore below); while it has no file it can
// read, every method throws ApiError OVERLOADED.

import type Database from 'better-sqlite3';
import assert from 'node:assert/strict';
import { mkdirSync, watch, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { LIMITS } from '../../config/limits.js';
import { ApiError, hasCode, LicenceError } from '../../errors/catalogue.js';
import { failIf } from '../../lib/faults.js';
import { sameKeyHash } from '../key-material.js';
import { decideCharge, emptyUsage, undoCharge } from '../licence.js';
import type { ChargedEndpoint, Licence, QuotaKind, Usage } from '../licence.js';
import type { ChargeOutcome, ChargeRequest, KeyRecord, KeyStore, KeyStoreNotice } from '../key-store.js';
import { fileIdentity, openKeyFile, releaseKeyFile, type OpenedKeyFile } from './key-file.js';
import type { MigrationOutcome } from './key-store-schema.js';

const KEY_STORE_FILE = 'keys.sqlite';

export function keyStorePath(dataDir: string): string {
  return path.join(dataDir, KEY_STORE_FILE);
}

interface KeyRow {
  key_hash: Buffer;
  fingerprint: string;
  created: number;
  quota_kind: QuotaKind;
  quota_limit: number | null;
  expires: number | null;
  results_max: number;
  offset_max: number | null;
  burst_size: number | null;
  burst_window: number | null;
  max_concurrent: number | null;
  fence_after: number | null;
  fence_before: number | null;
  private: number;
  allow_cidrs: string;
  v2: number;
  revoked: number | null;
  period_start: number;
  period_used: number;
  total_used: number;
  last_used: number | null;
  burst_log: Buffer | null;
}

const opt = (v: number | null): number | undefined => (v === null ? undefined : v);
const nul = (v: number | undefined): number | null => (v === undefined ? null : v);

function licenceOf(row: KeyRow): Licence {
  return Object.freeze({
    keyHash: row.key_hash,
    fingerprint: row.fingerprint,
    created: row.created,
    quotaKind: row.quota_kind,
    quotaLimit: opt(row.quota_limit),
    expires: opt(row.expires),
    resultsMax: row.results_max,
    offsetMax: opt(row.offset_max),
    burstSize: opt(row.burst_size),
    burstWindowSec: opt(row.burst_window),
    maxConcurrent: opt(row.max_concurrent),
    timeFenceAfter: opt(row.fence_after),
    timeFenceBefore: opt(row.fence_before),
    private: row.private !== 0,
    allowCidrs: Object.freeze(JSON.parse(row.allow_cidrs) as string[]),
    v2: row.v2 !== 0,
    revoked: opt(row.revoked),
  });
}

function decodeBurstLog(blob: Buffer | null): number[] {
  const log: number[] = [];
  if (blob === null) return log;
  for (let at = 0; at + 8 <= blob.length; at += 8) log.push(blob.readDoubleLE(at));
  return log;
}

function encodeBurstLog(log: readonly number[]): Buffer | null {
  if (log.length === 0) return null;
  const blob = Buffer.allocUnsafe(log.length * 8);
  for (let i = 0; i < log.length; i++) blob.writeDoubleLE(log[i]!, i * 8);
  return blob;
}

function usageOf(row: KeyRow): Usage {
  return {
    periodStart: row.period_start,
    periodUsed: row.period_used,
    totalUsed: row.total_used,
    lastUsed: opt(row.last_used),
    burstLog: decodeBurstLog(row.burst_log),
  };
}

/** Per-key state while one charge transaction runs. */
interface BatchEntry {
  readonly licence: Licence;
  readonly usage: Usage;
  readonly known: boolean;
  dirty: boolean;
}

/** Columns a charge reads, in this order (raw rows: no object per read). */
const COUNTER_COLUMNS = 'revoked, period_start, period_used, total_used, last_used, burst_log';
type CounterRow = [number | null, number, number, number, number | null, Buffer | null];

/** One open connection to one keys.sqlite file and its prepared statements: what SqliteKeyStore reads while that file is the store. */
class KeyConnection {
  private readonly db: Database.Database;
  private readonly selectRow: Database.Statement<[Buffer], KeyRow>;
  private readonly selectCounters: Database.Statement<[Buffer], CounterRow>;
  private readonly insertRow: Database.Statement<Record<string, unknown>>;
  private readonly updateUsage: Database.Statement<unknown[]>;
  private readonly addUsage: Database.Statement<unknown[]>;
  private readonly chargeTxn: Database.Transaction<(requests: readonly ChargeRequest[], now: number) => ChargeOutcome[]>;
  private readonly usageTxn: Database.Transaction<(counts: ReadonlyMap<string, number>, now: number) => void>;
  private readonly refundTxn: Database.Transaction<(licence: Licence, endpoint: ChargedEndpoint, chargedAt: number) => void>;

  constructor(db: Database.Database) {
    this.db = db;
    this.selectRow = db.prepare('SELECT * FROM keys WHERE key_hash = ?');
    this.selectCounters = db.prepare<[Buffer], CounterRow>(`SELECT ${COUNTER_COLUMNS} FROM keys WHERE key_hash = ?`).raw();
    this.insertRow = db.prepare(`INSERT INTO keys (key_hash, fingerprint, created, quota_kind, quota_limit, expires,
      results_max, offset_max, burst_size, burst_window, max_concurrent, fence_after, fence_before, private, allow_cidrs, v2)
      VALUES (@key_hash, @fingerprint, @created, @quota_kind, @quota_limit, @expires, @results_max, @offset_max,
      @burst_size, @burst_window, @max_concurrent, @fence_after, @fence_before, @private, @allow_cidrs, @v2)`);
    this.updateUsage = db.prepare(
      'UPDATE keys SET period_start = ?, period_used = ?, total_used = ?, last_used = ?, burst_log = ? WHERE key_hash = ?');
    this.addUsage = db.prepare(
      'UPDATE keys SET total_used = total_used + ?, last_used = MAX(COALESCE(last_used, 0), ?) WHERE key_hash = ?');
    this.chargeTxn = db.transaction((requests: readonly ChargeRequest[], now: number) => this.chargeInTransaction(requests, now));
    this.usageTxn = db.transaction((counts: ReadonlyMap<string, number>, now: number) => {
      const last = Math.floor(now);
      for (const [hex, count] of counts) this.addUsage.run(count, last, Buffer.from(hex, 'hex'));
    });
    this.refundTxn = db.transaction((licence: Licence, endpoint: ChargedEndpoint, chargedAt: number) => {
      const entry = this.loadCounters(licence);
      if (!entry.known) return;
      const u = entry.usage;
      undoCharge(entry.licence, u, endpoint, chargedAt);
      this.updateUsage.run(u.periodStart, u.periodUsed, u.totalUsed, nul(u.lastUsed), encodeBurstLog(u.burstLog), licence.keyHash);
    });
  }

  findLicence(keyHash: Buffer): Licence | undefined {
    const row = this.selectRow.get(keyHash);
    // The index found the row by hash; confirm in constant time rather than trust a byte-wise compare.
    return row !== undefined && sameKeyHash(row.key_hash, keyHash) ? licenceOf(row) : undefined;
  }

  record(keyHash: Buffer): KeyRecord | undefined {
    const row = this.selectRow.get(keyHash);
    return row !== undefined && sameKeyHash(row.key_hash, keyHash) ? { licence: licenceOf(row), usage: usageOf(row) } : undefined;
  }

  list(): KeyRecord[] {
    const rows = this.db.prepare('SELECT * FROM keys ORDER BY created, fingerprint').all() as KeyRow[];
    return rows.map((row) => ({ licence: licenceOf(row), usage: usageOf(row) }));
  }

  hasKeys(): boolean {
    return this.db.prepare('SELECT 1 FROM keys LIMIT 1').get() !== undefined;
  }

  insert(licence: Licence): void {
    try {
      this.insertRow.run({
        key_hash: licence.keyHash,
        fingerprint: licence.fingerprint,
        created: licence.created,
        quota_kind: licence.quotaKind,
        quota_limit: nul(licence.quotaLimit),
        expires: nul(licence.expires),
        results_max: licence.resultsMax,
        offset_max: nul(licence.offsetMax),
        burst_size: nul(licence.burstSize),
        burst_window: nul(licence.burstWindowSec),
        max_concurrent: nul(licence.maxConcurrent),
        fence_after: nul(licence.timeFenceAfter),
        fence_before: nul(licence.timeFenceBefore),
        private: licence.private ? 1 : 0,
        allow_cidrs: JSON.stringify(licence.allowCidrs),
        v2: licence.v2 ? 1 : 0,
      });
    } catch (err) {
      if (hasCode(err, 'SQLITE_CONSTRAINT_PRIMARYKEY')) {
        throw new LicenceError('--key', `a key with fingerprint ${licence.fingerprint} already exists`);
      }
      throw err;
    }
  }

  revoke(keyHash: Buffer, now: number): boolean {
    return this.db.prepare('UPDATE keys SET revoked = COALESCE(revoked, ?) WHERE key_hash = ?').run(Math.floor(now), keyHash).changes === 1;
  }

  resetUsage(keyHash: Buffer): boolean {
    return this.db.prepare(
      'UPDATE keys SET period_start = 0, period_used = 0, total_used = 0, last_used = NULL, burst_log = NULL WHERE key_hash = ?',
    ).run(keyHash).changes === 1;
  }

  chargeBatch(requests: readonly ChargeRequest[], now: number): ChargeOutcome[] {
    return this.chargeTxn.immediate(requests, now);
  }

  refundCharge(licence: Licence, endpoint: ChargedEndpoint, chargedAt: number): void {
    this.refundTxn.immediate(licence, endpoint, chargedAt);
  }

  addUnmeteredUsage(counts: ReadonlyMap<string, number>, now: number): void {
    if (counts.size > 0) this.usageTxn.immediate(counts, now);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  /**
   * Runs inside BEGIN IMMEDIATE: each key's counters (and revocation) are
   * read once, every request of that key is decided in order, and the row is
   * written once.
   */
  private chargeInTransaction(requests: readonly ChargeRequest[], now: number): ChargeOutcome[] {
    // Requests of one key nearly always share one Licence object (the gate's
    // cache); the hex map catches a key whose licence was reloaded mid-batch,
    // which must still read and write its row once.
    const byLicence = new Map<Licence, BatchEntry>();
    const byHex = new Map<string, BatchEntry>();
    const outcomes: ChargeOutcome[] = new Array(requests.length);
    for (let i = 0; i < requests.length; i++) {
      const req = requests[i]!;
      let entry = byLicence.get(req.licence);
      if (entry === undefined) {
        const hex = req.licence.keyHash.toString('hex');
        entry = byHex.get(hex);
        if (entry === undefined) {
          entry = this.loadCounters(req.licence);
          byHex.set(hex, entry);
        }
        byLicence.set(req.licence, entry);
      }
      if (!entry.known) {
        outcomes[i] = REFUSED_UNKNOWN;
        continue;
      }
      const refusal = decideCharge(entry.licence, entry.usage, req.endpoint, now);
      if (refusal === undefined) {
        entry.dirty = true;
        outcomes[i] = { ok: true, periodUsed: entry.usage.periodUsed };
      } else {
        outcomes[i] = refusal === 'RATE_LIMITED' ? REFUSED_LIMITED : refusal === 'QUOTA_EXPIRED' ? REFUSED_EXPIRED : REFUSED_UNKNOWN;
      }
    }
    for (const entry of byHex.values()) {
      if (!entry.dirty) continue;
      const u = entry.usage;
      this.updateUsage.run(u.periodStart, u.periodUsed, u.totalUsed, nul(u.lastUsed), encodeBurstLog(u.burstLog), entry.licence.keyHash);
    }
    return outcomes;
  }

  private loadCounters(licence: Licence): BatchEntry {
    const row = this.selectCounters.get(licence.keyHash);
    if (row === undefined) return { licence, usage: emptyUsage(), known: false, dirty: false };
    const [revoked, periodStart, periodUsed, totalUsed, lastUsed, burstLog] = row;
    return {
      licence: revoked === null ? licence : { ...licence, revoked },
      usage: { periodStart, periodUsed, totalUsed, lastUsed: opt(lastUsed), burstLog: decodeBurstLog(burstLog) },
      known: true,
      dirty: false,
    };
  }
}

const REFUSED_UNKNOWN: ChargeOutcome = Object.freeze({ ok: false, code: 'BAD_API_KEY' });
const REFUSED_LIMITED: ChargeOutcome = Object.freeze({ ok: false, code: 'RATE_LIMITED' });
const REFUSED_EXPIRED: ChargeOutcome = Object.freeze({ ok: false, code: 'QUOTA_EXPIRED' });

/**
 * The KeyStore of a data directory: the connection to the keys.sqlite that
 * is at its path, and, once watch() is called (a running server), the
 * checks that keep it so. A file replaced under it (another inode at the
 * path) is reopened with its own -wal and -shm (key-file.ts); a deleted one,
 * or one that cannot be opened (a newer release's, a corrupt one), leaves
 * the store closed, and every call fails with ApiError OVERLOADED (503,
 * which clients retry) until a file that opens is there again. Fail closed
 * rather than create an empty store: a deleted store is an operator's
 * mistake or a restore under way, and 403 for every key would tell clients
 * their keys are bad; `rrscan keys add` creates a new one when that is what
 * is wanted. Each change is reported once to the watch() listener.
 */
export class SqliteKeyStore implements KeyStore {
  private conn: KeyConnection | undefined;
  /** fileIdentity of the file `conn` reads; undefined while the store is closed. */
  private identity: string | undefined;
  /** What the store is waiting for while it is closed (the message reported), to report each failure once. */
  private failure: string | undefined;
  private readonly migrated: MigrationOutcome;
  private listener: ((notice: KeyStoreNotice) => void) | undefined;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  private constructor(private readonly file: string, opened: OpenedKeyFile) {
    this.conn = new KeyConnection(opened.db);
    this.identity = opened.identity;
    this.migrated = opened.migrated;
  }

  /** Opens (creating if needed, mode 0600) `<dataDir>/keys.sqlite`, migrating it forward; safe from several processes at once. */
  static open(dataDir: string): SqliteKeyStore {
    mkdirSync(dataDir, { recursive: true });
    const file = keyStorePath(dataDir);
    const opened = openKeyFile(file, { create: true, wait: true });
    // Neither happens with create and wait: a missing file is created, a held lock waited for (or a throw).
    assert.ok(opened !== 'missing' && opened !== 'busy', `${file}: ${String(opened)}`);
    return new SqliteKeyStore(file, opened);
  }

  findLicence(keyHash: Buffer): Licence | undefined {
    failIf('keystore-licence');
    return this.live().findLicence(keyHash);
  }

  record(keyHash: Buffer): KeyRecord | undefined {
    return this.live().record(keyHash);
  }

  list(): KeyRecord[] {
    return this.live().list();
  }

  hasKeys(): boolean {
    return this.live().hasKeys();
  }

  insert(licence: Licence): void {
    this.live().insert(licence);
  }

  revoke(keyHash: Buffer, now: number): boolean {
    return this.live().revoke(keyHash, now);
  }

  resetUsage(keyHash: Buffer): boolean {
    return this.live().resetUsage(keyHash);
  }

  chargeBatch(requests: readonly ChargeRequest[], now: number): ChargeOutcome[] {
    failIf('keystore-charge');
    return this.live().chargeBatch(requests, now);
  }

  refundCharge(licence: Licence, endpoint: ChargedEndpoint, chargedAt: number): void {
    this.live().refundCharge(licence, endpoint, chargedAt);
  }

  addUnmeteredUsage(counts: ReadonlyMap<string, number>, now: number): void {
    this.live().addUnmeteredUsage(counts, now);
  }

  /**
   * Checks every LIMITS.keyStoreCheckMs, and soon after fs.watch sees
   * keys.sqlite renamed or deleted, that the file at the path is the one
   * open; reports to `listener` what open() migrated, then each change.
   */
  watch(listener: (notice: KeyStoreNotice) => void): void {
    assert.ok(this.listener === undefined, 'watch() is called once');
    this.listener = listener;
    this.reportMigration(this.migrated);
    try {
      const name = path.basename(this.file);
      this.watcher = watch(path.dirname(this.file), (event, changed) => {
        if (event === 'rename' && changed === name) setTimeout(this.check, LIMITS.keyStoreSettleMs).unref();
      });
      this.watcher.on('error', () => undefined);
      this.watcher.unref();
    } catch {
      // Directory watching unsupported here: the periodic check covers it.
    }
    this.timer = setInterval(this.check, LIMITS.keyStoreCheckMs);
    this.timer.unref();
  }

  close(): void {
    this.closed = true;
    this.watcher?.close();
    if (this.timer !== undefined) clearInterval(this.timer);
    if (this.retry !== undefined) clearTimeout(this.retry);
    // A file that left the path before anyone noticed (no watch, or between two checks) leaves nothing behind either.
    try {
      if (this.conn !== undefined && fileIdentity(this.file) !== this.identity) this.release();
    } catch {
      // Cannot tell: the next open's record check still stands guard.
    }
    this.closeConnection();
  }

  private live(): KeyConnection {
    if (this.conn !== undefined) return this.conn;
    // No cause: the listener was told once why; a log line per refused request would say it again each time.
    throw new ApiError('OVERLOADED', this.closed ? 'key store closed' : 'key store unavailable');
  }

  /** Whether the file at the path is still the one open, and what to do when it is not. */
  private readonly check = (): void => {
    if (this.closed) return;
    let now: string | undefined;
    try {
      now = fileIdentity(this.file);
    } catch (err) {
      // Cannot even tell (permissions changed on the directory): answering from a file we cannot vouch for is worse than 503.
      this.closeConnection();
      this.unavailable(`${this.file} cannot be checked (${(err as Error).message}); data requests get 503 until it can`, err);
      return;
    }
    if (this.conn !== undefined && now === this.identity) return;
    this.release();
    if (now === undefined) {
      this.deleted();
      return;
    }
    let opened: OpenedKeyFile | 'missing' | 'busy';
    try {
      opened = openKeyFile(this.file, { create: false, wait: false });
    } catch (err) {
      this.closeConnection();
      this.unavailable(`${this.file} cannot be opened: ${(err as Error).message}; data requests get 503 until it can`, err);
      return;
    }
    if (opened === 'busy') {
      // Another process is opening it this moment (a --processes sibling saw the same change): try again
      // shortly, answering from the file open meanwhile as before the change was seen (rather than 503).
      if (this.retry === undefined) {
        this.retry = setTimeout(() => {
          this.retry = undefined;
          this.check();
        }, LIMITS.keyStoreOpenLockPollMs);
        this.retry.unref();
      }
      return;
    }
    if (opened === 'missing') {
      this.deleted();
      return;
    }
    // The old connection closes after the new one is open: SQLite neither checkpoints nor deletes the -wal of a
    // file that has moved, so closing it cannot touch what the new one uses.
    const wasOpen = this.conn !== undefined;
    this.closeConnection();
    this.conn = new KeyConnection(opened.db);
    this.identity = opened.identity;
    const before = this.failure;
    this.failure = undefined;
    this.listener?.({
      kind: 'reopened',
      message: wasOpen
        ? `${this.file} was replaced under the running server (another file at its path); reopened: its keys are served from now on`
        : `${this.file} can be read again (${before ?? 'it was closed'}); serving its keys`,
    });
    this.reportMigration(opened.migrated);
  };

  private reportMigration({ from, to }: MigrationOutcome): void {
    // From 0 is a store being created, not an upgrade.
    if (from > 0 && from < to) {
      this.listener?.({ kind: 'migrated', message: `${this.file}: key store schema migrated from version ${from} to ${to}` });
    }
  }

  /**
   * The open file is no longer at the path: delete the -wal and -shm made
   * for it while this process still holds it (key-file.ts releaseKeyFile).
   * Done once per file: afterwards the record names another or none.
   */
  private release(): void {
    if (this.conn === undefined || this.identity === undefined) return;
    try {
      releaseKeyFile(this.file, this.identity);
    } catch {
      // Best effort (a lock file it cannot open): the next open's record check still stands guard.
    }
  }

  private deleted(): void {
    this.closeConnection();
    this.unavailable(`${this.file} was deleted under the running server; data requests get 503 until it is restored ` +
      '(or `rrscan keys add` creates a new store)');
  }

  private closeConnection(): void {
    this.conn?.close();
    this.conn = undefined;
    this.identity = undefined;
  }

  private unavailable(message: string, err?: unknown): void {
    if (message === this.failure) return;
    this.failure = message;
    this.listener?.({ kind: 'unavailable', message, ...(err !== undefined ? { err } : {}) });
  }
}
