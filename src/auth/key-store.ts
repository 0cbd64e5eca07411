// The key store's interface and its record types, and nothing else:
// implementations live in stores/ and are chosen by stores/open-key-store.ts,
// so a new one plugs in without this module or its users changing.
//
// Contract: a store keeps licences and their usage counters keyed by
// sha256(key) (never the key), and charges batches of requests atomically:
// chargeBatch decides every request of the batch with licence.ts's
// decideCharge against the committed counters, commits, and only then
// returns, so a charge that was answered is never lost, and several processes
// (or, for a network store, several machines) sharing the store never admit
// more than the quota. Methods may answer synchronously (SQLite) or with a
// Promise (a network store); callers await them. The contract suite every
// store must pass is test/unit/auth/key-store-contract.ts.

import type { ChargedEndpoint, ChargeRefusal, Licence, Usage } from './licence.js';

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

/**
 * The decision on one request of a batch. periodUsed counts the requests of
 * the key's current period (or block) including this one, so the caller can
 * tell the client what remains.
 */
export type ChargeOutcome =
  | { readonly ok: true; readonly periodUsed: number }
  | { readonly ok: false; readonly code: ChargeRefusal };

/**
 * What a store tells its owner about itself while it runs; the server logs
 * each (migrated: info, reopened: warn, unavailable: error), and the gate
 * drops the licences it cached on `reopened` and `unavailable`.
 *   migrated     open() brought an older file up to this build's schema
 *   reopened     the store's file was replaced or came back; the store reads it now
 *   unavailable  the store has nothing it can read; every call fails with
 *                ApiError OVERLOADED (503) until it is `reopened`
 */
export interface KeyStoreNotice {
  readonly kind: 'migrated' | 'reopened' | 'unavailable';
  /** For people: names the file and what requests get meanwhile. */
  readonly message: string;
  readonly err?: unknown;
}

/** A value, or a Promise of it: synchronous stores answer without a microtask. */
export type Awaitable<T> = T | Promise<T>;

export interface KeyStore {
  /** The licence of a key hash, revoked ones included; undefined when unknown. */
  findLicence(keyHash: Buffer): Awaitable<Licence | undefined>;
  /** Licence and committed usage, for rate_limit and `keys show`; undefined when unknown. */
  record(keyHash: Buffer): Awaitable<KeyRecord | undefined>;
  /** Every key, revoked ones included, oldest (`created`) first, for `keys list`. */
  list(): Awaitable<KeyRecord[]>;
  /** Whether at least one key, revoked or not, is stored. */
  hasKeys(): Awaitable<boolean>;
  /** Stores a new licence with empty usage; LicenceError('--key') when the key hash exists. */
  insert(licence: Licence): Awaitable<void>;
  /** Marks a key revoked at `now` (a second revoke keeps the first time); false when unknown. */
  revoke(keyHash: Buffer, now: number): Awaitable<boolean>;
  /** Zeroes a key's usage counters and burst log (refilling a block); false when unknown. */
  resetUsage(keyHash: Buffer): Awaitable<boolean>;
  /**
   * Decides every request with decideCharge, in order, against the committed
   * counters as updated by the earlier requests of the batch, commits all of
   * it as one atomic step, and answers the outcomes in request order. A key
   * the store does not know, or that is revoked whatever the caller's copy
   * says, is refused with BAD_API_KEY; refused requests change nothing.
   */
  chargeBatch(requests: readonly ChargeRequest[], now: number): Awaitable<ChargeOutcome[]>;
  /**
   * Hands back one charge that chargeBatch admitted at `chargedAt` (the
   * `now` it was given), with undoCharge, atomically: the server failed the
   * request before it wrote any result. A key the store does not know is
   * skipped.
   */
  refundCharge(licence: Licence, endpoint: ChargedEndpoint, chargedAt: number): Awaitable<void>;
  /**
   * Adds usage that nothing enforces (unlimited keys), batched by the caller
   * (key hash hex -> count): total_used grows, last_used never moves back,
   * the period counters stay as they are; unknown keys are skipped.
   */
  addUnmeteredUsage(counts: ReadonlyMap<string, number>, now: number): Awaitable<void>;
  /**
   * Starts noticing what happens to the store's backing under it and
   * reports it to `listener` (KeyStoreNotice), first what opening it did.
   * Called once, by a running server; commands that open a store for a
   * moment never call it. A store with nothing to notice ignores it (Redis:
   * its server is the one copy, and a command it cannot answer already
   * fails with OVERLOADED). close() stops it.
   */
  watch(listener: (notice: KeyStoreNotice) => void): void;
  /** Releases the store's resources; calling it again does nothing. */
  close(): void;
}
