// ConcurrencyLimiter: how many requests of one key may be in flight at once
// (spec section 8 rule 3: above a key's cap the answer is 503). This module
// holds the interface alone; implementations live in limiters/, so a shared
// one (Redis) plugs into AccessGate without this module or the gate changing.
//
// Contract:
// - acquire(keyHex, max) takes one of the `max` slots of the key whose
//   sha256 is keyHex and answers a Lease, or answers undefined, holding
//   nothing, when `max` leases of that key are already held. It may answer
//   synchronously or with a Promise. `max` is the licence's maxConcurrent
//   (1 or more); the gate never asks for keys without a cap.
// - Lease.release() frees the slot. It is idempotent (later calls do
//   nothing) and never throws, so it belongs in `finally` blocks; a network
//   limiter frees its slot in the background and returns at once.
// - Scope is the implementation's: the in-process limiter counts the leases
//   of this process only; a shared limiter counts those of every process
//   that uses it. A shared limiter gives each lease a time to live and
//   renews it while the lease is held, so the slots of a process that dies
//   come back when their time to live runs out rather than never.
// - acquire rejects (or throws) only when the limiter cannot decide, e.g. a
//   shared limiter's service is unreachable; the gate passes the error on,
//   and a limiter should make a passing failure ApiError('OVERLOADED') (503,
//   which clients retry).
// - close() stops whatever the limiter runs (renewal timers, connections);
//   nothing is acquired after it. Calling it again does nothing.
//
// The contract suite every limiter must pass is
// test/unit/auth/concurrency-contract.ts.

import type { Awaitable } from './key-store.js';

/** One slot of a key's concurrency cap, held until released. */
export interface Lease {
  /** Frees the slot; idempotent, never throws. */
  release(): void;
}

export interface ConcurrencyLimiter {
  /** A lease when the key holds fewer than `max`, else undefined (nothing held). */
  acquire(keyHex: string, max: number): Awaitable<Lease | undefined>;
  close(): void;
}
