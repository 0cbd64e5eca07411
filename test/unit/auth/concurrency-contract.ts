// The contract every ConcurrencyLimiter must pass (src/auth/concurrency.ts).
// An implementation's test file calls describeLimiterContract with a
// function that opens a fresh limiter, one with no leases held; the suite
// closes it after each test. Keys are sha256 hex strings as the gate passes
// them.

import { afterEach, describe, expect, it } from 'vitest';
import type { ConcurrencyLimiter, Lease } from '../../../src/auth/concurrency.js';
import type { Awaitable } from '../../../src/auth/key-store.js';

const KEY_A = 'a'.repeat(64);
const KEY_B = 'b'.repeat(64);

export function describeLimiterContract(name: string, open: () => Awaitable<ConcurrencyLimiter>): void {
  describe(`ConcurrencyLimiter contract: ${name}`, () => {
    let limiter: ConcurrencyLimiter | undefined;

    afterEach(() => {
      limiter?.close();
      limiter = undefined;
    });

    async function fresh(): Promise<ConcurrencyLimiter> {
      limiter = await open();
      return limiter;
    }

    /** Acquires `n` times in sequence; answers the leases, undefined where refused. */
    async function acquireMany(l: ConcurrencyLimiter, key: string, max: number, n: number): Promise<Array<Lease | undefined>> {
      const out: Array<Lease | undefined> = [];
      for (let i = 0; i < n; i++) out.push(await l.acquire(key, max));
      return out;
    }

    const granted = (leases: ReadonlyArray<Lease | undefined>): number => leases.filter((x) => x !== undefined).length;

    it('grants max leases of a key, then refuses with undefined', async () => {
      const l = await fresh();
      const leases = await acquireMany(l, KEY_A, 3, 5);
      expect(leases.map((x) => x !== undefined)).toEqual([true, true, true, false, false]);
      expect(leases[3]).toBeUndefined();
      expect(typeof leases[0]!.release).toBe('function');
    });

    it('counts each key separately', async () => {
      const l = await fresh();
      expect(granted(await acquireMany(l, KEY_A, 1, 3))).toBe(1);
      expect(granted(await acquireMany(l, KEY_B, 2, 3))).toBe(2);
      expect(await l.acquire(KEY_A, 1)).toBeUndefined();
    });

    it('release frees exactly one slot, and a second release of the same lease frees nothing', async () => {
      const l = await fresh();
      const [a, b] = await acquireMany(l, KEY_A, 2, 2);
      expect(await l.acquire(KEY_A, 2)).toBeUndefined();
      a!.release();
      a!.release();
      const c = await l.acquire(KEY_A, 2);
      expect(c).toBeDefined();
      // Had the second release freed a slot too, this one would be granted.
      expect(await l.acquire(KEY_A, 2)).toBeUndefined();
      b!.release();
      c!.release();
      expect(granted(await acquireMany(l, KEY_A, 2, 3))).toBe(2);
    });

    it('holds nothing for a refused acquire', async () => {
      const l = await fresh();
      const a = await l.acquire(KEY_A, 1);
      expect(granted(await acquireMany(l, KEY_A, 1, 5))).toBe(0);
      a!.release();
      expect(granted(await acquireMany(l, KEY_A, 1, 3))).toBe(1);
    });

    it('applies the max given with each acquire to the leases already held', async () => {
      const l = await fresh();
      expect(granted(await acquireMany(l, KEY_A, 3, 2))).toBe(2);
      expect(await l.acquire(KEY_A, 2)).toBeUndefined();
      expect(await l.acquire(KEY_A, 3)).toBeDefined();
      expect(await l.acquire(KEY_A, 3)).toBeUndefined();
    });

    it('gives back every slot over many rounds (nothing leaks)', async () => {
      const l = await fresh();
      for (let round = 0; round < 200; round++) {
        const leases = await acquireMany(l, KEY_A, 4, 6);
        expect(granted(leases)).toBe(4);
        for (const x of leases) x?.release();
      }
      expect(granted(await acquireMany(l, KEY_A, 4, 6))).toBe(4);
    });

    it('grants exactly max of many acquires started at once', async () => {
      const l = await fresh();
      const leases = await Promise.all(Array.from({ length: 50 }, () => l.acquire(KEY_A, 7)));
      expect(granted(leases)).toBe(7);
    });

    it('release never throws, not even after close, and close may be called twice', async () => {
      const l = await fresh();
      const a = await l.acquire(KEY_A, 1);
      l.close();
      expect(() => a!.release()).not.toThrow();
      expect(() => a!.release()).not.toThrow();
      expect(() => l.close()).not.toThrow();
    });
  });
}
