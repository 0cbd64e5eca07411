// ConcurrencyLimiter that counts the leases of this process in memory.
//
// Contract: see ../concurrency.ts. Answers synchronously. Several server
// processes sharing one key store each enforce the cap separately (a key
// with cap 4 may hold 4 slots in each); a limiter shared through a network
// service is what makes the cap cluster-wide. Memory: one map entry per key
// with leases held, deleted when its last lease is released, so the map is
// never larger than the number of requests in flight.

import type { ConcurrencyLimiter, Lease } from '../concurrency.js';

export class InProcessLimiter implements ConcurrencyLimiter {
  /** Leases held per key hash (hex); keys without leases have no entry. */
  private readonly held = new Map<string, number>();

  acquire(keyHex: string, max: number): Lease | undefined {
    const n = this.held.get(keyHex) ?? 0;
    if (n >= max) return undefined;
    this.held.set(keyHex, n + 1);
    return new InProcessLease(this.held, keyHex);
  }

  close(): void {
    // Nothing runs in the background; leases still held stay valid until released.
  }
}

class InProcessLease implements Lease {
  /** undefined once released: that is what makes release() idempotent. */
  private held: Map<string, number> | undefined;
  private readonly keyHex: string;

  constructor(held: Map<string, number>, keyHex: string) {
    this.held = held;
    this.keyHex = keyHex;
  }

  release(): void {
    const held = this.held;
    if (held === undefined) return;
    this.held = undefined;
    const n = held.get(this.keyHex)! - 1;
    if (n > 0) held.set(this.keyHex, n);
    else held.delete(this.keyHex);
  }
}
