// QuotaLedger: turns per-request charges into group commits.
//
// Why: a SQLite write transaction costs ~12 us on this machine (measured:
// BEGIN IMMEDIATE + SELECT + UPDATE + COMMIT, WAL, synchronous=NORMAL); one
// per request would eat ~30% of a 25k req/s server. uWebSockets.js delivers
// every request that arrived in one epoll wake-up within one libuv poll
// phase, and setImmediate callbacks run right after that phase, so all
// charges queued during one event-loop turn are decided in ONE
// `BEGIN IMMEDIATE` transaction against the committed counters, committed,
// and only then resolved. A request is therefore never answered before its
// charge is durable (kill -9 safe), the cost per request falls with load,
// and several processes stay exact because each batch holds the write lock
// while it reads and writes the counters.
//
// Unmetered requests (unlimited keys, and flex on unlimited keys with a
// burst quota) enforce nothing, so they write nothing on the hot path: they
// are counted in memory and added to `total_used` at most every
// LIMITS.usageFlushIntervalMs and on close(), for `keys show`. A crash loses
// at most that interval of these statistics, which nothing depends on.
//
// Contract: charge() resolves with the store's outcome once committed, having
// written the time the store decided it at into the caller's ChargeStamp;
// rejects with ApiError OVERLOADED (503) when too many charges are waiting,
// another process held the store's write lock past its busy timeout, or the
// store's disk is full (SQLITE_FULL), and with the store's own error
// otherwise: a bug (the server answers 500), or the OVERLOADED a network
// store answers itself when it cannot reach its server (redis-client.ts). refund() hands one charge back
// at once, unbatched: refunds are rare (a request the server failed before
// it wrote any result) and nothing waits for them.

import { LIMITS } from '../config/limits.js';
import { ApiError, hasCode } from '../errors/catalogue.js';
import type { ChargeOutcome, ChargeRequest, KeyStore } from './key-store.js';
import type { ChargedEndpoint, Licence } from './licence.js';

/** Where charge() records when its request was decided, which refund() needs to find what to hand back. */
export interface ChargeStamp {
  chargedAt: number | undefined;
}

interface Settle {
  resolve(outcome: ChargeOutcome): void;
  reject(err: unknown): void;
  stamp: ChargeStamp;
}

function storeFailure(err: unknown): unknown {
  if (hasCode(err, 'SQLITE_BUSY', 'SQLITE_LOCKED')) return new ApiError('OVERLOADED', 'key store busy');
  // The key store's disk is full: the charge cannot be committed, and no
  // request is answered before its charge is. That is no bug of ours (500)
  // but a condition that passes: 503, which clients retry, costing the key
  // nothing. The cause rides along so the server logs it for the operator.
  if (hasCode(err, 'SQLITE_FULL')) return new ApiError('OVERLOADED', 'key store disk full', err);
  return err;
}

export class QuotaLedger {
  private readonly store: KeyStore;
  private readonly now: () => number;
  private requests: ChargeRequest[] = [];
  private settles: Settle[] = [];
  private flushScheduled = false;
  private unmetered = new Map<string, number>();
  private usageTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(store: KeyStore, now: () => number) {
    this.store = store;
    this.now = now;
  }

  /** Queues one charge for this turn's transaction; resolves after the commit. */
  charge(licence: Licence, endpoint: ChargedEndpoint, stamp: ChargeStamp): Promise<ChargeOutcome> {
    if (this.closed) return Promise.reject(new ApiError('OVERLOADED', 'shutting down'));
    if (this.requests.length >= LIMITS.chargesPendingMax) return Promise.reject(new ApiError('OVERLOADED', 'charge queue full'));
    return new Promise<ChargeOutcome>((resolve, reject) => {
      this.requests.push({ licence, endpoint });
      this.settles.push({ resolve, reject, stamp });
      if (!this.flushScheduled) {
        this.flushScheduled = true;
        setImmediate(this.flushCharges);
      }
    });
  }

  /** Hands back one charge the store admitted at `chargedAt`; rejects as a failed charge() does. */
  refund(licence: Licence, endpoint: ChargedEndpoint, chargedAt: number): Promise<void> {
    try {
      const done = this.store.refundCharge(licence, endpoint, chargedAt);
      return done instanceof Promise ? done.catch((err: unknown) => Promise.reject(storeFailure(err))) : Promise.resolve();
    } catch (err) {
      return Promise.reject(storeFailure(err));
    }
  }

  /** Counts a request that nothing enforces (key hash as hex). */
  countUnmetered(keyHex: string): void {
    this.unmetered.set(keyHex, (this.unmetered.get(keyHex) ?? 0) + 1);
    if (this.usageTimer === undefined && !this.closed) {
      this.usageTimer = setInterval(this.flushUsage, LIMITS.usageFlushIntervalMs);
      this.usageTimer.unref();
    }
  }

  /** Commits what is queued, synchronously as far as the store allows, and stops taking charges. */
  close(): void {
    while (this.requests.length > 0) this.flushCharges();
    this.closed = true;
    this.flushUsage();
    if (this.usageTimer !== undefined) clearInterval(this.usageTimer);
    this.usageTimer = undefined;
  }

  private readonly flushCharges = (): void => {
    this.flushScheduled = false;
    if (this.requests.length === 0) return;
    let batch: ChargeRequest[];
    let settles: Settle[];
    if (this.requests.length <= LIMITS.chargeBatchMax) {
      batch = this.requests;
      settles = this.settles;
      this.requests = [];
      this.settles = [];
    } else {
      batch = this.requests.splice(0, LIMITS.chargeBatchMax);
      settles = this.settles.splice(0, LIMITS.chargeBatchMax);
      this.flushScheduled = true;
      setImmediate(this.flushCharges);
    }
    let outcomes: ChargeOutcome[] | Promise<ChargeOutcome[]>;
    const now = this.now();
    try {
      outcomes = this.store.chargeBatch(batch, now);
    } catch (err) {
      rejectAll(settles, storeFailure(err));
      return;
    }
    if (outcomes instanceof Promise) {
      outcomes.then((o) => resolveAll(settles, o, now), (err: unknown) => rejectAll(settles, storeFailure(err)));
    } else {
      resolveAll(settles, outcomes, now);
    }
  };

  private readonly flushUsage = (): void => {
    if (this.unmetered.size === 0) {
      if (this.usageTimer !== undefined) clearInterval(this.usageTimer);
      this.usageTimer = undefined;
      return;
    }
    const counts = this.unmetered;
    this.unmetered = new Map();
    const putBack = (): void => {
      for (const [hex, n] of counts) this.unmetered.set(hex, (this.unmetered.get(hex) ?? 0) + n);
    };
    try {
      const done = this.store.addUnmeteredUsage(counts, this.now());
      if (done instanceof Promise) done.catch(putBack);
    } catch {
      // Busy: keep the counts for the next tick; statistics may be late, never wrong.
      putBack();
    }
  };
}

function resolveAll(settles: readonly Settle[], outcomes: readonly ChargeOutcome[], now: number): void {
  for (let i = 0; i < settles.length; i++) {
    const s = settles[i]!;
    s.stamp.chargedAt = now;
    s.resolve(outcomes[i]!);
  }
}

function rejectAll(settles: readonly Settle[], err: unknown): void {
  for (const s of settles) s.reject(err);
}
