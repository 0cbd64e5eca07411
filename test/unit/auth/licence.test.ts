import { describe, expect, it } from 'vitest';
import { fingerprintOf, hashKey } from '../../../src/auth/key-material.js';
import {
  decideCharge, emptyUsage, isMetered, licenceFromOptions, nextResetOf, periodStartOf, periodUsedAt, resolveFence,
} from '../../../src/auth/licence.js';
import type { Licence, NewKeyOptions } from '../../../src/auth/licence.js';

const HASH = hashKey('0123456789abcdef');
const make = (opts: NewKeyOptions): Licence => licenceFromOptions(opts, HASH, fingerprintOf(HASH), 1_700_000_000);

// 2024-01-01T00:00:00Z
const DAY0 = 1_704_067_200;

describe('licence defaults', () => {
  it('gives subscriptions results_max 10000 and offset_max 100000', () => {
    for (const quota of [{ kind: 'daily', limit: 1000 }, { kind: 'block', limit: 600 }, { kind: 'unlimited' }] as const) {
      const l = make({ quota });
      expect([l.resultsMax, l.offsetMax], quota.kind).toEqual([10_000, 100_000]);
    }
  });

  it('gives the hourly trial results_max 12 and no offsets', () => {
    const l = make({ quota: { kind: 'hourly', limit: 12 } });
    expect(l).toEqual({
      keyHash: HASH, fingerprint: '9f9f5111f7b2', created: 1_700_000_000, quotaKind: 'hourly', quotaLimit: 12,
      expires: undefined, resultsMax: 12, offsetMax: undefined, burstSize: undefined, burstWindowSec: undefined,
      maxConcurrent: undefined, timeFenceAfter: undefined, timeFenceBefore: undefined, private: false, allowCidrs: [],
      v2: true, revoked: undefined,
    });
  });

  it('derives offset_max from an explicit results_max, and keeps explicit values', () => {
    expect(make({ quota: { kind: 'daily', limit: 5 }, resultsMax: 256 }).offsetMax).toBe(2560);
    expect(make({ quota: { kind: 'hourly', limit: 5 }, offsetMax: 7 }).offsetMax).toBe(7);
    const l = make({
      quota: { kind: 'block', limit: 600 }, expires: 1_800_000_000, burst: { size: 5, windowSec: 360 }, maxConcurrent: 3,
      timeFenceAfter: -86_400, timeFenceBefore: 1_750_000_000, private: true, allowCidrs: ['10.0.0.0/8'], v2: false,
    });
    expect([l.expires, l.burstSize, l.burstWindowSec, l.maxConcurrent, l.timeFenceAfter, l.timeFenceBefore, l.private, l.allowCidrs, l.v2])
      .toEqual([1_800_000_000, 5, 360, 3, -86_400, 1_750_000_000, true, ['10.0.0.0/8'], false]);
  });
});

describe('licence validation', () => {
  const bad = (opts: NewKeyOptions): string => {
    try {
      make(opts);
    } catch (err) {
      expect((err as { code: string }).code).toBe('BAD_LICENCE');
      return (err as Error).message;
    }
    throw new Error('accepted');
  };
  const daily = { kind: 'daily', limit: 10 } as const;

  it('names the flag in every refusal', () => {
    expect(bad({ quota: { kind: 'daily', limit: 0 } })).toBe('--daily: must be a positive integer, got 0');
    expect(bad({ quota: { kind: 'block', limit: 1.5 } })).toBe('--block: must be a positive integer, got 1.5');
    expect(bad({ quota: { kind: 'weekly' } as unknown as NewKeyOptions['quota'] }))
      .toBe('--daily|--hourly|--block|--unlimited: unknown quota kind "weekly"');
    expect(bad({ quota: daily, resultsMax: 1_000_001 })).toBe('--results-max: must be at most 1000000, got 1000001');
    expect(bad({ quota: daily, offsetMax: -1 })).toBe('--offset-max: must be a positive integer, got -1');
    expect(bad({ quota: daily, expires: 0 })).toBe('--expires: must be a positive integer, got 0');
    expect(bad({ quota: daily, burst: { size: 1001, windowSec: 10 } })).toBe('--burst: must be at most 1000, got 1001');
    expect(bad({ quota: daily, burst: { size: 5, windowSec: 0 } })).toBe('--burst-window: must be a positive integer, got 0');
    expect(bad({ quota: daily, maxConcurrent: 1025 })).toBe('--max-concurrent: must be at most 1024, got 1025');
    expect(bad({ quota: daily, timeFenceAfter: 0 }))
      .toBe('--time-fence-after: must be epoch seconds or negative seconds relative to now, got 0');
    expect(bad({ quota: daily, timeFenceAfter: 200, timeFenceBefore: 100 }))
      .toBe('--time-fence-after: 200 leaves nothing visible before --time-fence-before 100');
    expect(bad({ quota: daily, allowCidrs: ['10.0.0.0/8', 'x'] })).toBe('--allow-cidr: "x" is not an IPv4 or IPv6 address or CIDR');
    expect(bad({ quota: daily, allowCidrs: Array.from({ length: 65 }, (_, i) => `10.0.0.${i}`) }))
      .toBe('--allow-cidr: at most 64 CIDRs per key');
  });
});

describe('quota periods and fences', () => {
  it('resets daily quotas at the next UTC day start and hourly ones at the next hour', () => {
    expect(periodStartOf('daily', DAY0 + 86_399)).toBe(DAY0);
    expect(nextResetOf('daily', DAY0)).toBe(DAY0 + 86_400);
    expect(nextResetOf('daily', DAY0 + 86_399.9)).toBe(DAY0 + 86_400);
    expect(periodStartOf('hourly', DAY0 + 3_661)).toBe(DAY0 + 3_600);
    expect(nextResetOf('hourly', DAY0 + 3_661)).toBe(DAY0 + 7_200);
    expect(nextResetOf('block', DAY0)).toBeUndefined();
    expect(nextResetOf('unlimited', DAY0)).toBeUndefined();
  });

  it('resolves negative fences against the request time and keeps absolute ones', () => {
    expect(resolveFence(-86_400, DAY0 + 0.7)).toBe(DAY0 - 86_400);
    expect(resolveFence(1_600_000_000, DAY0)).toBe(1_600_000_000);
    expect(resolveFence(undefined, DAY0)).toBeUndefined();
  });
});

describe('decideCharge', () => {
  it('spends a block and then refuses with RATE_LIMITED; expiry gives QUOTA_EXPIRED', () => {
    const l = make({ quota: { kind: 'block', limit: 2 }, expires: DAY0 + 100 });
    const u = emptyUsage();
    expect(decideCharge(l, u, 'lookup', DAY0)).toBeUndefined();
    expect(decideCharge(l, u, 'flex', DAY0)).toBeUndefined();
    expect(decideCharge(l, u, 'summarize', DAY0)).toBe('RATE_LIMITED');
    expect(u).toEqual({ periodStart: 0, periodUsed: 2, totalUsed: 2, lastUsed: DAY0, burstLog: [] });
    expect(decideCharge(l, u, 'lookup', DAY0 + 100)).toBe('QUOTA_EXPIRED');
  });

  it('refills a daily quota at 00:00 UTC and never when the clock steps back', () => {
    const l = make({ quota: { kind: 'daily', limit: 1 } });
    const u = emptyUsage();
    expect(decideCharge(l, u, 'flex', DAY0 + 86_399)).toBeUndefined();
    expect(decideCharge(l, u, 'flex', DAY0 + 86_399)).toBe('RATE_LIMITED');
    expect(decideCharge(l, u, 'flex', DAY0 + 86_400)).toBeUndefined();
    expect(u.periodStart).toBe(DAY0 + 86_400);
    expect(decideCharge(l, u, 'flex', DAY0 + 86_399)).toBe('RATE_LIMITED');
    expect(periodUsedAt(l, u, DAY0 + 2 * 86_400)).toBe(0);
    expect(u.totalUsed).toBe(2);
  });

  it('applies the burst quota to lookup and summarize in a sliding window, never to flex', () => {
    const l = make({ quota: { kind: 'daily', limit: 100 }, burst: { size: 2, windowSec: 10 } });
    const u = emptyUsage();
    expect(decideCharge(l, u, 'lookup', DAY0)).toBeUndefined();
    expect(decideCharge(l, u, 'summarize', DAY0 + 5)).toBeUndefined();
    expect(decideCharge(l, u, 'lookup', DAY0 + 9)).toBe('RATE_LIMITED');
    expect(decideCharge(l, u, 'flex', DAY0 + 9)).toBeUndefined();
    expect(decideCharge(l, u, 'flex', DAY0 + 9)).toBeUndefined();
    // At +10 the first request left the window; the one at +5 is still in it.
    expect(decideCharge(l, u, 'lookup', DAY0 + 10)).toBeUndefined();
    expect(decideCharge(l, u, 'lookup', DAY0 + 14)).toBe('RATE_LIMITED');
    expect(u.burstLog).toEqual([DAY0 + 5, DAY0 + 10]);
    // Burst refusals consumed no primary quota: 2 lookups + 2 flex + 1 lookup.
    expect(u.periodUsed).toBe(5);
  });

  it('refuses revoked licences as bad keys before anything else', () => {
    const l = { ...make({ quota: { kind: 'unlimited' } }), revoked: DAY0 };
    expect(decideCharge(l, emptyUsage(), 'flex', DAY0)).toBe('BAD_API_KEY');
  });

  it('meters every request of a quota key, and only burst-counted ones of an unlimited key', () => {
    const unlimited = make({ quota: { kind: 'unlimited' } });
    const bursty = make({ quota: { kind: 'unlimited' }, burst: { size: 5, windowSec: 360 } });
    const daily = make({ quota: { kind: 'daily', limit: 5 } });
    expect(['flex', 'lookup', 'summarize'].map((e) => isMetered(unlimited, e as 'flex'))).toEqual([false, false, false]);
    expect(['flex', 'lookup', 'summarize'].map((e) => isMetered(bursty, e as 'flex'))).toEqual([false, true, true]);
    expect(['flex', 'lookup', 'summarize'].map((e) => isMetered(daily, e as 'flex'))).toEqual([true, true, true]);
  });
});
