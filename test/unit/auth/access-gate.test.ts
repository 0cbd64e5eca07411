import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AccessGate } from '../../../src/auth/access-gate.js';
import type { Endpoint, Grant } from '../../../src/auth/access-gate.js';
import { hashKey } from '../../../src/auth/key-material.js';
import { addKey } from '../../../src/auth/key-admin.js';
import type { NewKeyOptions } from '../../../src/auth/licence.js';
import type { ConcurrencyLimiter, Lease } from '../../../src/auth/concurrency.js';
import { InProcessLimiter } from '../../../src/auth/limiters/in-process-limiter.js';
import { openKeyStore, type KeyStoreConfig } from '../../../src/auth/stores/open-key-store.js';
import { SqliteKeyStore } from '../../../src/auth/stores/sqlite-key-store.js';
import { ApiError } from '../../../src/errors/catalogue.js';
import { describeEachKeyStore, type KeyStoreUnderTest } from '../../helpers/redis-server.js';

const DAY0 = 1_704_067_200; // 2024-01-01T00:00:00Z
const IP = '192.0.2.10';

interface Refusal { code: string; status: number; body: string }

async function refusal(p: Promise<unknown>): Promise<Refusal> {
  try {
    await p;
  } catch (err) {
    const e = err as Refusal;
    return { code: e.code, status: e.status, body: e.body };
  }
  throw new Error('expected a refusal');
}

const BAD_KEY = { code: 'BAD_API_KEY', status: 403, body: 'Error: Bad API key' };
const NOT_V2 = { code: 'NOT_AUTHORISED', status: 401, body: 'Error: Not authorized for this API version' };
const EXPIRED = { code: 'QUOTA_EXPIRED', status: 401, body: 'Error: Quota is expired' };
const LIMITED = { code: 'RATE_LIMITED', status: 429, body: 'Error: Rate limit exceeded' };
const BUSY = { code: 'TOO_MANY_CONNECTIONS', status: 503, body: 'Error: Too many concurrent connections' };
const OVERLOADED = { code: 'OVERLOADED', status: 503, body: 'Error: Server is overloaded, try again later' };

let dir: string;
let clock: number;
let gates: AccessGate[];
/** The store the gates of the running test use: the test directory's SQLite store unless describeEachKeyStore says otherwise. */
let storeConfig: () => KeyStoreConfig;

function gate(ttlMs?: number): AccessGate {
  const opts = ttlMs === undefined ? { now: () => clock } : { now: () => clock, licenceCacheTtlMs: ttlMs };
  const g = AccessGate.open(storeConfig(), opts);
  gates.push(g);
  return g;
}

/** The whole path a request takes: authenticate, then charge for the same endpoint. */
async function admit(g: AccessGate, apiKey: string | undefined, ip: string, endpoint: Endpoint): Promise<Grant> {
  return g.charge(await g.authenticate(apiKey, ip, endpoint), endpoint);
}

const key = (opts: NewKeyOptions): Promise<string> => addKey(storeConfig(), opts);

async function usageOf(k: string) {
  const store = openKeyStore(storeConfig());
  try {
    return (await store.record(hashKey(k)))!.usage;
  } finally {
    store.close();
  }
}

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-gate-'));
  clock = DAY0 + 45_296.25; // 12:34:56.25 UTC
  gates = [];
  storeConfig = () => ({ kind: 'sqlite', dataDir: dir });
});

afterEach(() => {
  for (const g of gates) g.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Runs the tests of the enclosing suite against `store`, empty at the start of each. */
function useStore(store: KeyStoreUnderTest): void {
  beforeEach(async () => {
    await store.empty();
    storeConfig = () => store.config(dir);
  });
}

describeEachKeyStore('AccessGate: refusals and caps', (store) => {
  useStore(store);

  describe('AccessGate: 403 Bad API key', () => {
    it('refuses absent, malformed and unknown keys', async () => {
      await key({ quota: { kind: 'unlimited' } });
      const g = gate();
      expect(await refusal(admit(g, undefined, IP, 'flex'))).toEqual(BAD_KEY);
      expect(await refusal(admit(g, '', IP, 'lookup'))).toEqual(BAD_KEY);
      expect(await refusal(admit(g, 'not a key at all!', IP, 'lookup'))).toEqual(BAD_KEY);
      expect(await refusal(admit(g, '0123456789abcdef0123', IP, 'lookup'))).toEqual(BAD_KEY);
      expect(await refusal(g.rateLimit(undefined, IP))).toEqual(BAD_KEY);
      expect(await refusal(admit(g, undefined, IP, 'rate_limit'))).toEqual(BAD_KEY);
    });

    it('accepts the key in any letter case (hex digits)', async () => {
      const k = await key({ quota: { kind: 'unlimited' }, key: 'ABCDEF0123456789-abcdef' });
      expect(k).toBe('abcdef0123456789-abcdef');
      const grant = await admit(gate(), 'abcdef0123456789-ABCDEF', IP, 'flex');
      expect(grant.limits.fingerprint).toBe(hashKey(k).toString('hex').slice(0, 12));
    });

    it('refuses a client outside the allow list, IPv4-mapped IPv6 matched as IPv4', async () => {
      const k = await key({ quota: { kind: 'unlimited' }, allowCidrs: ['192.0.2.0/24', '2001:db8::/32'] });
      const g = gate();
      await admit(g, k, '192.0.2.200', 'flex');
      await admit(g, k, '::ffff:192.0.2.200', 'flex');
      await admit(g, k, '0000:0000:0000:0000:0000:ffff:c000:02c8', 'lookup');
      await admit(g, k, '2001:db8::7', 'lookup');
      expect(await refusal(admit(g, k, '198.51.100.1', 'flex'))).toEqual(BAD_KEY);
      expect(await refusal(admit(g, k, '::ffff:198.51.100.1', 'flex'))).toEqual(BAD_KEY);
      expect(await refusal(admit(g, k, '2001:db9::7', 'flex'))).toEqual(BAD_KEY);
      expect(await refusal(g.rateLimit(k, '198.51.100.1'))).toEqual(BAD_KEY);
    });

    it('refuses a revoked metered key at once and an unlimited one after the cache time', async () => {
      const metered = await key({ quota: { kind: 'daily', limit: 100 } });
      const unlimited = await key({ quota: { kind: 'unlimited' } });
      const cached = gate();
      const fresh = gate(0);
      await admit(cached, metered, IP, 'lookup');
      await admit(cached, unlimited, IP, 'lookup');
      const store = openKeyStore(storeConfig());
      expect(await store.revoke(hashKey(metered), clock)).toBe(true);
      expect(await store.revoke(hashKey(unlimited), clock)).toBe(true);
      store.close();
      // The charge transaction re-reads the row: no grace period for charged keys.
      expect(await refusal(admit(cached, metered, IP, 'lookup'))).toEqual(BAD_KEY);
      // Unlimited keys write nothing per request, so the cached licence serves until it is 1 s old...
      await admit(cached, unlimited, IP, 'flex');
      // ...while rate_limit always reads the row, and a gate without cache sees it at once.
      expect(await refusal(cached.rateLimit(unlimited, IP))).toEqual(BAD_KEY);
      expect(await refusal(admit(fresh, unlimited, IP, 'flex'))).toEqual(BAD_KEY);
      expect(await refusal(admit(fresh, metered, IP, 'rate_limit'))).toEqual(BAD_KEY);
    });
  });

  describe('AccessGate: 401', () => {
    it('refuses keys without v2 on every endpoint', async () => {
      const k = await key({ quota: { kind: 'unlimited' }, v2: false });
      const g = gate();
      for (const ep of ['flex', 'lookup', 'summarize', 'rate_limit'] as const) expect(await refusal(admit(g, k, IP, ep))).toEqual(NOT_V2);
      expect(await refusal(g.rateLimit(k, IP))).toEqual(NOT_V2);
    });

    it('refuses expired licences of every kind with Quota is expired, but still answers rate_limit', async () => {
      const g = gate();
      for (const quota of [{ kind: 'block', limit: 5 }, { kind: 'daily', limit: 5 }, { kind: 'unlimited' }] as const) {
        const k = await key({ quota, expires: DAY0 });
        expect(await refusal(admit(g, k, IP, 'lookup')), quota.kind).toEqual(EXPIRED);
        expect(await refusal(admit(g, k, IP, 'flex')), quota.kind).toEqual(EXPIRED);
        expect((await g.rateLimit(k, IP)) as { rate: { expires: number } }).toMatchObject({ rate: { expires: DAY0 } });
      }
    });

    it('expires at the exact second', async () => {
      const k = await key({ quota: { kind: 'block', limit: 5 }, expires: DAY0 + 50_000 });
      const g = gate();
      clock = DAY0 + 49_999.999;
      await admit(g, k, IP, 'lookup');
      clock = DAY0 + 50_000;
      expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(EXPIRED);
    });
  });

  describe('AccessGate: 429 Rate limit exceeded', () => {
    it('uses a block up exactly and keeps it used across reopen', async () => {
      const k = await key({ quota: { kind: 'block', limit: 3 } });
      const g = gate();
      const heads: string[] = [];
      for (let i = 0; i < 3; i++) heads.push((await admit(g, k, IP, i === 0 ? 'flex' : 'lookup')).headers[1]![1]);
      expect(heads).toEqual(['2', '1', '0']);
      expect(await refusal(admit(g, k, IP, 'summarize'))).toEqual(LIMITED);
      g.close();
      gates.pop();
      expect(await refusal(admit(gate(), k, IP, 'flex'))).toEqual(LIMITED);
      expect((await usageOf(k))).toMatchObject({ periodUsed: 3, totalUsed: 3 });
    });

    it('refills a daily quota at the next UTC day start', async () => {
      const k = await key({ quota: { kind: 'daily', limit: 2 } });
      const g = gate();
      await admit(g, k, IP, 'lookup');
      await admit(g, k, IP, 'flex');
      expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(LIMITED);
      clock = DAY0 + 86_399.999;
      expect(await refusal(admit(g, k, IP, 'flex'))).toEqual(LIMITED);
      clock = DAY0 + 86_400;
      const grant = await admit(g, k, IP, 'flex');
      expect(grant.headers).toEqual([
        ['X-RateLimit-Limit', '2'], ['X-RateLimit-Remaining', '1'], ['X-RateLimit-Reset', String(DAY0 + 2 * 86_400)],
        ['X-RateLimit-Expires', 'n/a'],
      ]);
    });

    it('refills an hourly (trial) quota at the next hour', async () => {
      const k = await key({ quota: { kind: 'hourly', limit: 12 } });
      const g = gate();
      for (let i = 0; i < 12; i++) await admit(g, k, IP, 'lookup');
      expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(LIMITED);
      clock = DAY0 + 46_800; // 13:00
      const grant = await admit(g, k, IP, 'lookup');
      expect(grant.limits).toEqual({ resultsMax: 12, offsetMax: undefined, timeFenceAfter: undefined, timeFenceBefore: undefined,
        private: false, fingerprint: grant.limits.fingerprint });
      expect(grant.headers[2]).toEqual(['X-RateLimit-Reset', String(DAY0 + 50_400)]);
    });

    it('applies the burst quota to lookup and summarize only, never to flex, on quota and unlimited keys', async () => {
      const g = gate();
      for (const quota of [{ kind: 'daily', limit: 1000 }, { kind: 'unlimited' }] as const) {
        const k = await key({ quota, burst: { size: 2, windowSec: 360 } });
        await admit(g, k, IP, 'lookup');
        await admit(g, k, IP, 'summarize');
        expect(await refusal(admit(g, k, IP, 'lookup')), quota.kind).toEqual(LIMITED);
        expect(await refusal(admit(g, k, IP, 'summarize')), quota.kind).toEqual(LIMITED);
        for (let i = 0; i < 5; i++) await admit(g, k, IP, 'flex');
        clock += 360;
        await admit(g, k, IP, 'lookup');
        clock -= 360;
      }
    });
  });

  describe('AccessGate: 503 concurrency cap', () => {
    it('caps grants held at once per key; release frees exactly one slot, once', async () => {
      const k = await key({ quota: { kind: 'daily', limit: 100 }, maxConcurrent: 2 });
      const other = await key({ quota: { kind: 'unlimited' }, maxConcurrent: 1 });
      const g = gate();
      const a = await admit(g, k, IP, 'flex');
      const b = await admit(g, k, IP, 'lookup');
      expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(BUSY);
      await admit(g, other, IP, 'lookup'); // other keys are not affected
      // rate_limit neither needs nor takes a slot.
      await admit(g, k, IP, 'rate_limit');
      await g.rateLimit(k, IP);
      a.release();
      a.release();
      const c = await admit(g, k, IP, 'summarize');
      expect(await refusal(admit(g, k, IP, 'flex'))).toEqual(BUSY);
      b.release();
      c.release();
      await Promise.all([admit(g, k, IP, 'flex'), admit(g, k, IP, 'flex')]);
      // 503s consumed no quota: a, b, c and the last two.
      expect((await usageOf(k)).periodUsed).toBe(5);
    });

    it('gives the slot back when the charge is refused', async () => {
      const k = await key({ quota: { kind: 'block', limit: 1 }, maxConcurrent: 1 });
      const g = gate();
      (await admit(g, k, IP, 'flex')).release();
      expect(await refusal(admit(g, k, IP, 'flex'))).toEqual(LIMITED);
      expect(await refusal(admit(g, k, IP, 'flex'))).toEqual(LIMITED); // not BUSY: the slot was freed
    });
  });
});

describe('AccessGate: charging', () => {
  it('1,000 concurrent requests on a block of 500 give exactly 500 grants', async () => {
    const k = await key({ quota: { kind: 'block', limit: 500 } });
    const g = gate();
    const results = await Promise.allSettled(Array.from({ length: 1000 }, (_, i) => admit(g, k, IP, i % 2 ? 'flex' : 'lookup')));
    const granted = results.filter((r): r is PromiseFulfilledResult<Grant> => r.status === 'fulfilled');
    expect(granted.length).toBe(500);
    expect(results.filter((r) => r.status === 'rejected' && (r.reason as Refusal).code === 'RATE_LIMITED').length).toBe(500);
    // Each grant saw its own place in the block.
    const remaining = granted.map((r) => Number(r.value.headers[1]![1])).sort((x, y) => x - y);
    expect(remaining).toEqual(Array.from({ length: 500 }, (_, i) => i));
    expect((await usageOf(k))).toMatchObject({ periodUsed: 500, totalUsed: 500 });
  });

  it('group-commits the charges of one event-loop turn in one transaction, at most 4,096 per transaction', async () => {
    const k = await key({ quota: { kind: 'daily', limit: 1_000_000 } });
    const g = gate();
    const spy = vi.spyOn(SqliteKeyStore.prototype, 'chargeBatch');
    try {
      await Promise.all(Array.from({ length: 100 }, () => admit(g, k, IP, 'lookup')));
      expect(spy.mock.calls.map((c) => c[0].length)).toEqual([100]);
      spy.mockClear();
      await Promise.all(Array.from({ length: 5000 }, () => admit(g, k, IP, 'flex')));
      expect(spy.mock.calls.map((c) => c[0].length)).toEqual([4096, 904]);
    } finally {
      spy.mockRestore();
    }
    expect((await usageOf(k)).periodUsed).toBe(5100);
  });

  it('never charges rate_limit', async () => {
    const k = await key({ quota: { kind: 'block', limit: 1 } });
    const g = gate();
    for (let i = 0; i < 5; i++) {
      const grant = await admit(g, k, IP, 'rate_limit');
      expect(grant.headers).toEqual([]);
      await g.rateLimit(k, IP);
    }
    expect((await usageOf(k)).totalUsed).toBe(0);
    await admit(g, k, IP, 'lookup');
    expect(await g.rateLimit(k, IP)).toEqual({
      rate: { reset: 'n/a', expires: 'n/a', limit: 1, remaining: 0, results_max: 10_000, offset_max: 100_000 },
    });
  });

  it('counts unlimited requests without a write per request, and writes them by close', async () => {
    const k = await key({ quota: { kind: 'unlimited' } });
    const g = gate();
    for (let i = 0; i < 7; i++) (await admit(g, k, IP, i % 2 ? 'flex' : 'lookup')).release();
    expect((await usageOf(k)).totalUsed).toBe(0);
    const grant = await admit(g, k, IP, 'summarize');
    expect(grant.headers).toEqual([
      ['X-RateLimit-Limit', 'unlimited'], ['X-RateLimit-Remaining', 'n/a'], ['X-RateLimit-Reset', 'n/a'], ['X-RateLimit-Expires', 'n/a'],
    ]);
    g.close();
    gates.pop();
    expect((await usageOf(k))).toMatchObject({ periodUsed: 0, totalUsed: 8, lastUsed: Math.floor(clock) });
  });

  it('refund() hands a grant\'s charge back once, burst entry included; nothing for unmetered grants or another gate\'s', async () => {
    const k = await key({ quota: { kind: 'block', limit: 2 }, burst: { size: 1, windowSec: 60 } });
    const u = await key({ quota: { kind: 'unlimited' } });
    const g = gate();
    const grant = await admit(g, k, IP, 'lookup');
    expect((await usageOf(k))).toMatchObject({ periodUsed: 1, totalUsed: 1, burstLog: [clock] });
    await g.refund(grant);
    await g.refund(grant);
    expect((await usageOf(k))).toMatchObject({ periodUsed: 0, totalUsed: 0, burstLog: [] });
    // The burst entry went too: a second lookup inside the window is admitted.
    await admit(g, k, IP, 'lookup');
    expect((await usageOf(k))).toMatchObject({ periodUsed: 1, totalUsed: 1 });
    await g.refund(await admit(g, u, IP, 'flex'));
    await g.refund(await admit(g, k, IP, 'rate_limit'));
    expect((await usageOf(k))).toMatchObject({ periodUsed: 1, totalUsed: 1 });
    await expect(gate().refund(grant)).rejects.toThrow('refund(): the grant was not made by this gate');
  });
});

describe('AccessGate: limits handed to search', () => {
  it('passes results_max, offset_max, privacy and absolute fences', async () => {
    const k = await key({ quota: { kind: 'daily', limit: 10 }, resultsMax: 256, offsetMax: 3000, private: true,
      timeFenceAfter: 1_262_304_000, timeFenceBefore: 1_800_000_000 });
    const grant = await admit(gate(), k, IP, 'lookup');
    expect(grant.limits).toEqual({ resultsMax: 256, offsetMax: 3000, timeFenceAfter: 1_262_304_000, timeFenceBefore: 1_800_000_000,
      private: true, fingerprint: hashKey(k).toString('hex').slice(0, 12) });
  });

  it('resolves relative fences at each request', async () => {
    const k = await key({ quota: { kind: 'unlimited' }, timeFenceAfter: -86_400, timeFenceBefore: -60 });
    const g = gate();
    const first = await admit(g, k, IP, 'flex');
    expect([first.limits.timeFenceAfter, first.limits.timeFenceBefore]).toEqual([DAY0 + 45_296 - 86_400, DAY0 + 45_296 - 60]);
    clock += 100;
    const later = await admit(g, k, IP, 'rate_limit');
    expect([later.limits.timeFenceAfter, later.limits.timeFenceBefore]).toEqual([DAY0 + 45_396 - 86_400, DAY0 + 45_396 - 60]);
  });
});

describeEachKeyStore('AccessGate: admission steps', (store) => {
  useStore(store);

  describe('AccessGate: authenticate, then charge', () => {
    it('answers a known key synchronously and refuses with a rejected Promise, never a throw', async () => {
      const k = await key({ quota: { kind: 'daily', limit: 5 } });
      const g = gate();
      // A network store answers a key it must read with a Promise (AccessGate contract, step 1); cached, every store's key is synchronous.
      if (store.name === 'Redis') await g.authenticate(k, IP, 'lookup');
      const first = g.authenticate(k, IP, 'lookup');
      expect(first).not.toBeInstanceOf(Promise);
      expect(g.authenticate(k.toUpperCase(), IP, 'lookup')).not.toBeInstanceOf(Promise);
      let refused: unknown;
      expect(() => { refused = g.authenticate('0123456789abcdef0123', IP, 'lookup'); }).not.toThrow();
      expect(refused).toBeInstanceOf(Promise);
      expect(await refusal(refused as Promise<unknown>)).toEqual(BAD_KEY);
      expect(await refusal(g.authenticate(undefined, IP, 'flex') as Promise<unknown>)).toEqual(BAD_KEY);
    });

    it('neither charges nor takes a slot: a request the caller refuses after authenticate costs nothing', async () => {
      const k = await key({ quota: { kind: 'block', limit: 1 }, maxConcurrent: 1 });
      const g = gate();
      for (let i = 0; i < 5; i++) {
        const admission = await g.authenticate(k, IP, 'lookup');
        expect(admission.endpoint).toBe('lookup');
        expect(admission.limits.resultsMax).toBe(10_000);
      }
      expect((await usageOf(k)).totalUsed).toBe(0);
      const grant = await g.charge(await g.authenticate(k, IP, 'flex'), 'flex');
      expect(grant.headers[1]).toEqual(['X-RateLimit-Remaining', '0']);
      expect((await usageOf(k))).toMatchObject({ periodUsed: 1, totalUsed: 1 });
    });

    it('checks expiry in authenticate for data endpoints only', async () => {
      const k = await key({ quota: { kind: 'unlimited' }, expires: DAY0 });
      const g = gate();
      expect(await refusal(Promise.resolve(g.authenticate(k, IP, 'summarize')))).toEqual(EXPIRED);
      const admission = await g.authenticate(k, IP, 'rate_limit');
      const grant = await g.charge(admission, 'rate_limit');
      expect(grant.headers).toEqual([]);
      expect(grant.limits).toBe(admission.limits);
    });

    it('takes the slot before the quota: a capped key with its block used up answers 503 while a slot is held, 429 after', async () => {
      const k = await key({ quota: { kind: 'block', limit: 1 }, maxConcurrent: 1 });
      const g = gate();
      const held = await admit(g, k, IP, 'lookup');
      expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(BUSY);
      held.release();
      expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(LIMITED);
      expect((await usageOf(k))).toMatchObject({ periodUsed: 1, totalUsed: 1 });
    });

    it('refuses a key revoked between authenticate and charge, frees its slot, and forgets the cached licence', async () => {
      const k = await key({ quota: { kind: 'daily', limit: 10 }, maxConcurrent: 1 });
      const g = gate();
      const admission = await g.authenticate(k, IP, 'lookup');
      const store = openKeyStore(storeConfig());
      expect(await store.revoke(hashKey(k), clock)).toBe(true);
      store.close();
      expect(await refusal(Promise.resolve(g.charge(admission, 'lookup')))).toEqual(BAD_KEY);
      // The cached licence is gone: authenticate reads the store again and sees the revocation.
      expect(await refusal(Promise.resolve(g.authenticate(k, IP, 'flex')))).toEqual(BAD_KEY);
      expect((await usageOf(k)).totalUsed).toBe(0);
    });

    it('treats charging an admission twice, as another endpoint, or on another gate as a bug (plain Error), charging nothing', async () => {
      const k = await key({ quota: { kind: 'daily', limit: 10 } });
      const g = gate();
      const other = gate();
      const bug = async (p: unknown): Promise<string> => {
        const err = await Promise.resolve(p).then(() => undefined, (e: unknown) => e);
        expect(err).toBeInstanceOf(Error);
        expect(err).not.toBeInstanceOf(ApiError);
        return (err as Error).message;
      };
      const forLookup = await g.authenticate(k, IP, 'lookup');
      expect(await bug(g.charge(forLookup, 'flex'))).toBe('charge(): an admission for lookup charged as flex');
      const forFlex = await g.authenticate(k, IP, 'flex');
      expect(await bug(other.charge(forFlex, 'flex'))).toBe('charge(): the admission was not made by this gate');
      expect(await bug(g.charge({ endpoint: 'flex', limits: forFlex.limits }, 'flex'))).toBe('charge(): the admission was not made by this gate');
      await g.charge(forFlex, 'flex');
      expect(await bug(g.charge(forFlex, 'flex'))).toBe('charge(): the admission was charged already');
      expect((await usageOf(k)).totalUsed).toBe(1);
    });
  });
});

describe('AccessGate: built from any KeyStore and ConcurrencyLimiter', () => {
  /** An in-process limiter that answers with Promises, as a networked one would, and logs what happens. */
  class AsyncLimiter implements ConcurrencyLimiter {
    readonly inner = new InProcessLimiter();
    readonly log: string[] = [];
    closed = false;
    async acquire(keyHex: string, max: number): Promise<Lease | undefined> {
      await new Promise((resolve) => setImmediate(resolve));
      const lease = this.inner.acquire(keyHex, max);
      this.log.push(lease === undefined ? `refused ${max}` : `acquired ${max}`);
      if (lease === undefined) return undefined;
      return { release: () => { this.log.push('released'); lease.release(); } };
    }

    close(): void {
      this.closed = true;
    }
  }

  function gateWith(limiter: ConcurrencyLimiter): AccessGate {
    const g = new AccessGate(SqliteKeyStore.open(dir), limiter, { now: () => clock });
    gates.push(g);
    return g;
  }

  it('waits for an asynchronous limiter, frees the lease of a refused charge, and closes the limiter with the gate', async () => {
    const k = await key({ quota: { kind: 'block', limit: 2 }, maxConcurrent: 2 });
    const limiter = new AsyncLimiter();
    const g = gateWith(limiter);
    const a = await admit(g, k, IP, 'lookup');
    const b = await admit(g, k, IP, 'flex');
    expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(BUSY);
    a.release();
    a.release();
    expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(LIMITED);
    b.release();
    expect(limiter.log).toEqual(['acquired 2', 'acquired 2', 'refused 2', 'released', 'released', 'acquired 2', 'released', 'released']);
    expect((await usageOf(k))).toMatchObject({ periodUsed: 2, totalUsed: 2 });
    g.close();
    gates.pop();
    expect(limiter.closed).toBe(true);
  });

  it('passes a limiter failure on, charging nothing', async () => {
    const k = await key({ quota: { kind: 'daily', limit: 5 }, maxConcurrent: 3 });
    const failing: ConcurrencyLimiter = {
      acquire: () => Promise.reject(new ApiError('OVERLOADED', 'limiter unreachable')),
      close: () => undefined,
    };
    const g = gateWith(failing);
    expect(await refusal(admit(g, k, IP, 'lookup'))).toEqual(OVERLOADED);
    expect((await usageOf(k)).totalUsed).toBe(0);
  });

  it('never asks the limiter about keys without a cap, nor for rate_limit', async () => {
    const capped = await key({ quota: { kind: 'daily', limit: 5 }, maxConcurrent: 1 });
    const free = await key({ quota: { kind: 'daily', limit: 5 } });
    const limiter = new AsyncLimiter();
    const g = gateWith(limiter);
    (await admit(g, free, IP, 'lookup')).release();
    (await admit(g, capped, IP, 'rate_limit')).release();
    expect(limiter.log).toEqual([]);
  });
});
