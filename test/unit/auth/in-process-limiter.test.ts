import { describe, expect, it } from 'vitest';
import { InProcessLimiter } from '../../../src/auth/limiters/in-process-limiter.js';
import { describeLimiterContract } from './concurrency-contract.js';

describeLimiterContract('InProcessLimiter', () => new InProcessLimiter());

describe('InProcessLimiter', () => {
  const held = (l: InProcessLimiter): Map<string, number> => (l as unknown as { held: Map<string, number> }).held;

  it('answers synchronously', () => {
    const l = new InProcessLimiter();
    const lease = l.acquire('a'.repeat(64), 1);
    expect(lease).not.toBeInstanceOf(Promise);
    expect(lease).toBeDefined();
  });

  it('counts the leases of one instance only (one process)', () => {
    const one = new InProcessLimiter();
    const two = new InProcessLimiter();
    expect(one.acquire('a'.repeat(64), 1)).toBeDefined();
    expect(two.acquire('a'.repeat(64), 1)).toBeDefined();
    expect(one.acquire('a'.repeat(64), 1)).toBeUndefined();
  });

  it('keeps no entry for a key once its last lease is released', () => {
    const l = new InProcessLimiter();
    const leases = Array.from({ length: 100 }, (_, i) => l.acquire(i.toString(16).padStart(64, '0'), 2));
    leases.push(l.acquire('0'.repeat(64), 2));
    expect(held(l).size).toBe(100);
    expect(held(l).get('0'.repeat(64))).toBe(2);
    for (const x of leases) x!.release();
    expect(held(l).size).toBe(0);
  });
});
