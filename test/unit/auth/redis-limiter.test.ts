// RedisConcurrencyLimiter: the ConcurrencyLimiter contract against a private
// redis-server, then what only a shared limiter has: caps across limiters
// (front ends), slots of a dead front end coming back when their time to
// live runs out, renewal keeping a long request's slot, and OVERLOADED when
// Redis is gone.

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RedisConcurrencyLimiter } from '../../../src/auth/limiters/redis-limiter.js';
import { HAVE_REDIS, REDIS_SKIP_REASON, startRedis, type RedisServer } from '../../helpers/redis-server.js';
import { describeLimiterContract } from './concurrency-contract.js';

if (!HAVE_REDIS) console.warn(`redis-limiter.test.ts: ${REDIS_SKIP_REASON}`);

const KEY = 'c'.repeat(64);
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!HAVE_REDIS)('RedisConcurrencyLimiter', () => {
  let redis: RedisServer;
  let opened: RedisConcurrencyLimiter[] = [];

  beforeAll(async () => {
    redis = await startRedis();
  });

  afterAll(async () => {
    await redis?.close();
  });

  afterEach(() => {
    for (const l of opened) l.close();
    opened = [];
  });

  const flush = (): Promise<void> => redis.flush();

  async function limiter(opts: { leaseTtlMs?: number; renewMs?: number } = {}): Promise<RedisConcurrencyLimiter> {
    const l = new RedisConcurrencyLimiter(redis.url, opts);
    opened.push(l);
    return l;
  }

  /**
   * Acquires on `l` until granted or a second has passed: a release on
   * another limiter (front end) travels on its own connection, so another
   * connection sees it shortly after, not at once.
   */
  async function acquireSoon(l: RedisConcurrencyLimiter, max: number): Promise<unknown> {
    const end = Date.now() + 1_000;
    let lease = await l.acquire(KEY, max);
    while (lease === undefined && Date.now() < end) {
      await sleep(5);
      lease = await l.acquire(KEY, max);
    }
    return lease;
  }

  describeLimiterContract('RedisConcurrencyLimiter', async () => {
    await flush();
    return new RedisConcurrencyLimiter(redis.url);
  });

  it('counts the leases of every limiter sharing the Redis (front ends)', async () => {
    await flush();
    const one = await limiter();
    const two = await limiter();
    const a = await one.acquire(KEY, 2);
    expect(a).toBeDefined();
    expect(await two.acquire(KEY, 2)).toBeDefined();
    expect(await one.acquire(KEY, 2)).toBeUndefined();
    expect(await two.acquire(KEY, 2)).toBeUndefined();
    a!.release();
    expect(await acquireSoon(two, 2)).toBeDefined();
    expect(await one.acquire(KEY, 2)).toBeUndefined();
  });

  it('gives back the slots of a limiter closed with leases held once their time to live has run out', async () => {
    await flush();
    const dying = await limiter({ leaseTtlMs: 400, renewMs: 100 });
    const other = await limiter({ leaseTtlMs: 400, renewMs: 100 });
    expect(await dying.acquire(KEY, 1)).toBeDefined();
    dying.close();
    expect(await other.acquire(KEY, 1)).toBeUndefined();
    await sleep(500);
    expect(await other.acquire(KEY, 1)).toBeDefined();
  });

  it('renews a held lease, so a request longer than the time to live keeps its slot', async () => {
    await flush();
    const holder = await limiter({ leaseTtlMs: 300, renewMs: 80 });
    const other = await limiter({ leaseTtlMs: 300, renewMs: 80 });
    const lease = await holder.acquire(KEY, 1);
    expect(lease).toBeDefined();
    for (let i = 0; i < 5; i++) {
      await sleep(200);
      expect(await other.acquire(KEY, 1), `after ${(i + 1) * 200} ms`).toBeUndefined();
    }
    lease!.release();
    expect(await acquireSoon(other, 1)).toBeDefined();
  });

  it('refuses with 503 OVERLOADED while Redis is down, and decides again when it is back', async () => {
    await flush();
    const l = await limiter();
    expect(await l.acquire(KEY, 1)).toBeDefined();
    await redis.stop();
    try {
      await expect(l.acquire(KEY, 5)).rejects.toMatchObject({ code: 'OVERLOADED', status: 503 });
    } finally {
      await redis.start();
    }
    let lease;
    for (let i = 0; i < 50 && lease === undefined; i++) {
      lease = await l.acquire(KEY, 5).catch(() => undefined);
      if (lease === undefined) await sleep(100);
    }
    expect(lease).toBeDefined();
  });
});
