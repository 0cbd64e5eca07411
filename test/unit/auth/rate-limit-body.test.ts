import { describe, expect, it } from 'vitest';
import { fingerprintOf, hashKey } from '../../../src/auth/key-material.js';
import { emptyUsage, licenceFromOptions } from '../../../src/auth/licence.js';
import type { NewKeyOptions, Usage } from '../../../src/auth/licence.js';
import { quotaHeaders, rateLimitBody } from '../../../src/auth/rate-limit-body.js';

const HASH = hashKey('0123456789abcdef');
const make = (opts: NewKeyOptions) => licenceFromOptions(opts, HASH, fingerprintOf(HASH), 1_700_000_000);
const DAY0 = 1_704_067_200; // 2024-01-01T00:00:00Z
const NOW = DAY0 + 45_296; // 12:34:56
const used = (periodStart: number, periodUsed: number): Usage => ({ ...emptyUsage(), periodStart, periodUsed, totalUsed: periodUsed });
const body = (opts: NewKeyOptions, usage: Usage = emptyUsage()) => JSON.stringify(rateLimitBody(make(opts), usage, NOW));

describe('rate_limit body (compat.md), exact per quota kind', () => {
  it('daily: reset at the next UTC midnight, remaining of this day', () => {
    expect(body({ quota: { kind: 'daily', limit: 1000 } }, used(DAY0, 1)))
      .toBe('{"rate":{"reset":1704153600,"expires":"n/a","limit":1000,"remaining":999,"results_max":10000,"offset_max":100000}}');
  });

  it('daily: yesterday\'s usage does not count today', () => {
    expect(body({ quota: { kind: 'daily', limit: 1000 } }, used(DAY0 - 86_400, 1000)))
      .toBe('{"rate":{"reset":1704153600,"expires":"n/a","limit":1000,"remaining":1000,"results_max":10000,"offset_max":100000}}');
  });

  it('hourly trial: reset at the next hour, results_max 12, no offset_max key', () => {
    expect(body({ quota: { kind: 'hourly', limit: 12 } }, used(DAY0 + 43_200, 12)))
      .toBe('{"rate":{"reset":1704114000,"expires":"n/a","limit":12,"remaining":0,"results_max":12}}');
  });

  it('block with expiry and burst: reset n/a, integers for the burst keys', () => {
    expect(body({ quota: { kind: 'block', limit: 600 }, expires: 1_735_689_600, resultsMax: 256, offsetMax: 3_000_000,
      burst: { size: 10, windowSec: 300 } }, used(0, 592)))
      .toBe('{"rate":{"reset":"n/a","expires":1735689600,"limit":600,"remaining":8,"results_max":256,"offset_max":3000000,' +
        '"burst_size":10,"burst_window":300}}');
  });

  it('block without expiry: expires n/a; remaining never negative', () => {
    expect(body({ quota: { kind: 'block', limit: 5 } }, used(0, 9)))
      .toBe('{"rate":{"reset":"n/a","expires":"n/a","limit":5,"remaining":0,"results_max":10000,"offset_max":100000}}');
  });

  it('unlimited: limit "unlimited", remaining and reset "n/a"', () => {
    expect(body({ quota: { kind: 'unlimited' } }))
      .toBe('{"rate":{"reset":"n/a","expires":"n/a","limit":"unlimited","remaining":"n/a","results_max":10000,"offset_max":100000}}');
    expect(body({ quota: { kind: 'unlimited' }, expires: 1_735_689_600 }))
      .toBe('{"rate":{"reset":"n/a","expires":1735689600,"limit":"unlimited","remaining":"n/a","results_max":10000,"offset_max":100000}}');
  });

  it('never sends "n/a" for results_max, offset_max, burst_size or burst_window', () => {
    for (const opts of [{ quota: { kind: 'hourly', limit: 12 } }, { quota: { kind: 'unlimited' } }] as NewKeyOptions[]) {
      const rate = rateLimitBody(make(opts), emptyUsage(), NOW).rate;
      for (const k of ['results_max', 'offset_max', 'burst_size', 'burst_window']) {
        if (k in rate) expect(typeof rate[k], k).toBe('number');
      }
    }
  });
});

describe('X-RateLimit-* headers', () => {
  it('daily: limit, remaining after this request, reset, expires', () => {
    expect(quotaHeaders(make({ quota: { kind: 'daily', limit: 1000 }, expires: 1_735_689_600 }), 1, NOW)).toEqual([
      ['X-RateLimit-Limit', '1000'], ['X-RateLimit-Remaining', '999'], ['X-RateLimit-Reset', '1704153600'],
      ['X-RateLimit-Expires', '1735689600'],
    ]);
  });

  it('block and unlimited', () => {
    expect(quotaHeaders(make({ quota: { kind: 'block', limit: 600 } }), 600, NOW)).toEqual([
      ['X-RateLimit-Limit', '600'], ['X-RateLimit-Remaining', '0'], ['X-RateLimit-Reset', 'n/a'], ['X-RateLimit-Expires', 'n/a'],
    ]);
    expect(quotaHeaders(make({ quota: { kind: 'unlimited' } }), 0, NOW)).toEqual([
      ['X-RateLimit-Limit', 'unlimited'], ['X-RateLimit-Remaining', 'n/a'], ['X-RateLimit-Reset', 'n/a'], ['X-RateLimit-Expires', 'n/a'],
    ]);
  });
});
