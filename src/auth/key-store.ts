// The key store's small interface, its record types, and the two
// conveniences `npm start` uses (addKey, hasKeys).
//
// Contract: a store keeps licences and their usage counters keyed by
// sha256(key) (never the key), and charges batches of requests atomically:
// chargeBatch decides every request of the batch with licence.ts's
// decideCharge against the committed counters, commits, and only then
// returns, so a charge that was answered is never lost, and several processes
// (or, for a Redis store, several machines) sharing the store never admit
// more than the quota. Methods may answer synchronously (SQLite) or with a
// Promise (a network store); callers await them. The one implementation
// today is SqliteKeyStore (`<dataDir>/keys.sqlite`).

import { existsSync } from 'node:fs';
import { canonicalKey, fingerprintOf, generateKey, hashKey } from './key-material.js';
import { licenceFromOptions } from './licence.js';
import type { ChargedEndpoint, ChargeRefusal, Licence, Usage } from './licence.js';
import { SqliteKeyStore, keyStorePath } from './sqlite-key-store.js';
import { LicenceError } from '../errors/catalogue.js';

export interface NewKeyOptions {
  key?: string;
  quota: { kind: 'unlimited' } | { kind: 'daily' | 'hourly' | 'block'; limit: number };
  expires?: number;
  resultsMax?: number;
  offsetMax?: number;
  burst?: { size: number; windowSec: number };
  maxConcurrent?: number;
  timeFenceAfter?: number;
  timeFenceBefore?: number;
  private?: boolean;
  allowCidrs?: string[];
  v2?: boolean;
}

export interface KeyRecord {
  readonly licence: Licence;
  readonly usage: Usage;
}

export interface ChargeRequest {
  /**
   * The caller's copy of the licence. Only `revoked` can change after a key
   * is added (there is no command that edits a licence), so a store re-reads
   * that and the counters in its transaction and trusts the rest.
   */
  readonly licence: Licence;
  readonly endpoint: ChargedEndpoint;
}

export type ChargeOutcome =
  | { readonly ok: true; readonly periodUsed: number }
  | { readonly ok: false; readonly code: ChargeRefusal };

export type Awaitable<T> = T | Promise<T>;

export interface KeyStore {
  /** The licence of a key hash, revoked ones included; undefined when unknown. */
  findLicence(keyHash: Buffer): Awaitable<Licence | undefined>;
  /** Licence and committed usage, for rate_limit and `keys show`. */
  record(keyHash: Buffer): Awaitable<KeyRecord | undefined>;
  /** Every key, oldest first, for `keys list`. */
  list(): Awaitable<KeyRecord[]>;
  hasKeys(): Awaitable<boolean>;
  /** Stores a new licence; LicenceError('--key') when the key exists. */
  insert(licence: Licence): Awaitable<void>;
  /** Marks a key revoked; false when unknown. */
  revoke(keyHash: Buffer, now: number): Awaitable<boolean>;
  /** Zeroes a key's usage counters (and burst log); false when unknown. */
  resetUsage(keyHash: Buffer): Awaitable<boolean>;
  /** Decides and commits a batch atomically; outcomes in request order. */
  chargeBatch(requests: readonly ChargeRequest[], now: number): Awaitable<ChargeOutcome[]>;
  /** Adds usage that nothing enforces (unlimited keys), batched by the caller: key hash hex -> count. */
  addUnmeteredUsage(counts: ReadonlyMap<string, number>, now: number): Awaitable<void>;
  close(): void;
}

/**
 * Adds a key to `<dataDir>/keys.sqlite` and returns it: the given key in
 * canonical (lower-case) form, or a fresh 64-hex-digit one. Throws
 * LicenceError naming the offending option.
 */
export function addKey(dataDir: string, opts: NewKeyOptions): string {
  let key: string;
  if (opts.key !== undefined) {
    const canonical = canonicalKey(opts.key);
    if (canonical === undefined) throw new LicenceError('--key', 'must be 16 to 256 hex digits or dashes');
    key = canonical;
  } else {
    key = generateKey();
  }
  const keyHash = hashKey(key);
  const licence = licenceFromOptions(opts, keyHash, fingerprintOf(keyHash), Math.floor(Date.now() / 1000));
  const store = SqliteKeyStore.open(dataDir);
  try {
    store.insert(licence);
  } finally {
    store.close();
  }
  return key;
}

/** Whether the data directory holds at least one key (revoked ones count); never creates the store. */
export function hasKeys(dataDir: string): boolean {
  if (!existsSync(keyStorePath(dataDir))) return false;
  const store = SqliteKeyStore.open(dataDir);
  try {
    return store.hasKeys();
  } finally {
    store.close();
  }
}
