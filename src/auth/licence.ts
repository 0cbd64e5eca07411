// What a licence is and what it permits: the stored record of one key, its
// defaults, its quota periods, its time fences, and the one rule that decides
// whether a request may be charged (decideCharge). No I/O here: every key
// store (stores/*.ts) calls decideCharge inside its own atomic
// read-modify-write, so all of them enforce exactly the same rules.
//
// Quota kinds (spec section 8, compat.md "rate_limit"):
// - daily:   N requests per UTC day; the counter restarts at 00:00 UTC.
// - hourly:  N requests per clock hour (the trial licence: 12 per hour,
//            results_max 12, no offsets unless --offset-max says otherwise).
// - block:   N requests in all, never replenished (`keys reset` refills it);
//            `expires` ends it early.
// - unlimited: no count is enforced.
// `expires` (epoch seconds) ends a licence of any kind: 401 Quota is expired.
//
// Burst (secondary quota, lookup and summarize only, never flex): a sliding
// window. A request is refused when burst_size requests were already charged
// in the last burst_window seconds; the store keeps the timestamps of charged
// requests (at most burst_size of them, so the log is bounded by
// LIMITS.burstSizeMax). A sliding window, unlike a fixed one, cannot let
// 2 x burst_size requests through around a window boundary.
//
// Defaults when a flag is absent: results_max 10,000 for daily, block and
// unlimited licences and 12 for hourly (trial) ones; offset_max 10 x
// results_max for subscriptions and none (offsets refused, 416) for hourly
// ones; no burst quota; no concurrency cap; no time fence; v2 allowed; any
// client address.

import { LIMITS } from '../config/limits.js';
import { LicenceError } from '../errors/catalogue.js';
import { parseAllowCidr } from './client-address.js';

/** What `keys add` asks for; licenceFromOptions validates it and applies the defaults. */
export interface NewKeyOptions {
  key?: string;
  quota: { kind: 'unlimited' } | { kind: 'daily' | 'hourly' | 'block'; limit: number };
  expires?: number;
  resultsMax?: number;
  offsetMax?: number;
  burst?: { size: number; windowSec: number };
  maxConcurrent?: number;
  timeFenceAfter?: number;
  timeFenceBefore?: number;
  private?: boolean;
  allowCidrs?: string[];
  v2?: boolean;
}

export type QuotaKind = 'unlimited' | 'daily' | 'hourly' | 'block';
/** Requests that are charged; `rate_limit` never is. */
export type ChargedEndpoint = 'flex' | 'lookup' | 'summarize';
/** Why a charge was refused; the same codes as src/errors/catalogue.ts. */
export type ChargeRefusal = 'BAD_API_KEY' | 'QUOTA_EXPIRED' | 'RATE_LIMITED';

export interface Licence {
  readonly keyHash: Buffer;
  readonly fingerprint: string;
  /** Epoch seconds the key was added. */
  readonly created: number;
  readonly quotaKind: QuotaKind;
  /** Requests per period (daily/hourly) or in all (block); undefined for unlimited. */
  readonly quotaLimit: number | undefined;
  readonly expires: number | undefined;
  readonly resultsMax: number;
  /** undefined: offsets not allowed. */
  readonly offsetMax: number | undefined;
  readonly burstSize: number | undefined;
  readonly burstWindowSec: number | undefined;
  readonly maxConcurrent: number | undefined;
  /** As given: epoch seconds, or negative seconds relative to the time of each request. */
  readonly timeFenceAfter: number | undefined;
  readonly timeFenceBefore: number | undefined;
  readonly private: boolean;
  readonly allowCidrs: readonly string[];
  readonly v2: boolean;
  /** Epoch seconds of `keys revoke`; a revoked key is answered like an unknown one. */
  readonly revoked: number | undefined;
}

/** The counters of one key, as committed. decideCharge mutates a copy inside a store transaction. */
export interface Usage {
  /** Start of the period periodUsed counts (0 for block and unlimited). */
  periodStart: number;
  periodUsed: number;
  /** Every charged request since the key was added or last reset. */
  totalUsed: number;
  /** Epoch seconds of the last charged request. */
  lastUsed: number | undefined;
  /** Timestamps (epoch seconds) of recent burst-counted requests, oldest first; empty without a burst quota. */
  burstLog: number[];
}

export function emptyUsage(): Usage {
  return { periodStart: 0, periodUsed: 0, totalUsed: 0, lastUsed: undefined, burstLog: [] };
}

/** Length of a daily and an hourly quota period; exported for stores that apply these rules in another language (Lua). */
export const DAY_SEC = 86_400;
export const HOUR_SEC = 3_600;

/** Start of the quota period containing `now`: UTC day or clock hour; 0 for kinds without periods. */
export function periodStartOf(kind: QuotaKind, now: number): number {
  if (kind === 'daily') return Math.floor(now / DAY_SEC) * DAY_SEC;
  if (kind === 'hourly') return Math.floor(now / HOUR_SEC) * HOUR_SEC;
  return 0;
}

/** When a time quota next refills (epoch seconds); undefined for block and unlimited. */
export function nextResetOf(kind: QuotaKind, now: number): number | undefined {
  if (kind === 'daily') return periodStartOf(kind, now) + DAY_SEC;
  if (kind === 'hourly') return periodStartOf(kind, now) + HOUR_SEC;
  return undefined;
}

/** Requests used in the period containing `now` (a stale period counts as unused). */
export function periodUsedAt(licence: Licence, usage: Usage, now: number): number {
  return periodStartOf(licence.quotaKind, now) > usage.periodStart ? 0 : usage.periodUsed;
}

/** A stored fence as epoch seconds at `now`: negative values are relative to now. */
export function resolveFence(value: number | undefined, now: number): number | undefined {
  if (value === undefined) return undefined;
  return value < 0 ? Math.floor(now) + value : value;
}

export function isExpired(licence: Licence, now: number): boolean {
  return licence.expires !== undefined && now >= licence.expires;
}

/** Whether a request on this endpoint must go through a committed charge (the others only update usage statistics). */
export function isMetered(licence: Licence, endpoint: ChargedEndpoint): boolean {
  return licence.quotaKind !== 'unlimited' || (licence.burstSize !== undefined && endpoint !== 'flex');
}

/**
 * The one charging rule. Decides one request against `usage` (the committed
 * counters, already updated by earlier requests of the same transaction) and,
 * when it is admitted, charges it by mutating `usage`. Order matters: a
 * request refused by the burst quota does not consume the primary quota.
 */
export function decideCharge(licence: Licence, usage: Usage, endpoint: ChargedEndpoint, now: number): ChargeRefusal | undefined {
  if (licence.revoked !== undefined) return 'BAD_API_KEY';
  if (isExpired(licence, now)) return 'QUOTA_EXPIRED';
  const kind = licence.quotaKind;
  const periodStart = periodStartOf(kind, now);
  // Only move forward: a clock stepping back over a boundary must not hand quota back.
  if (periodStart > usage.periodStart) {
    usage.periodStart = periodStart;
    usage.periodUsed = 0;
  }
  if (kind !== 'unlimited' && usage.periodUsed >= (licence.quotaLimit as number)) return 'RATE_LIMITED';
  const burstCounted = licence.burstSize !== undefined && endpoint !== 'flex';
  if (burstCounted) {
    const log = usage.burstLog;
    const windowStart = now - (licence.burstWindowSec as number);
    let expired = 0;
    while (expired < log.length && log[expired]! <= windowStart) expired++;
    if (expired > 0) log.splice(0, expired);
    if (log.length >= licence.burstSize) return 'RATE_LIMITED';
    log.push(now);
  }
  usage.periodUsed++;
  usage.totalUsed++;
  usage.lastUsed = Math.floor(now);
  return undefined;
}

/**
 * Hands back one charge that decideCharge made at `chargedAt` (the `now` of
 * its transaction), mutating `usage` as decideCharge does: for a request the
 * server failed before it wrote any result. Only what the charge still
 * counts comes back: its period's count while that period lasts, its burst
 * entry while the window holds it, and total_used; last_used stays.
 */
export function undoCharge(licence: Licence, usage: Usage, endpoint: ChargedEndpoint, chargedAt: number): void {
  if (periodStartOf(licence.quotaKind, chargedAt) === usage.periodStart && usage.periodUsed > 0) usage.periodUsed--;
  if (usage.totalUsed > 0) usage.totalUsed--;
  if (licence.burstSize !== undefined && endpoint !== 'flex') {
    const at = usage.burstLog.lastIndexOf(chargedAt);
    if (at >= 0) usage.burstLog.splice(at, 1);
  }
}

function positiveInt(option: string, value: number | undefined, max: number = Number.MAX_SAFE_INTEGER): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value <= 0) throw new LicenceError(option, `must be a positive integer, got ${String(value)}`);
  if (value > max) throw new LicenceError(option, `must be at most ${max}, got ${value}`);
  return value;
}

function fence(option: string, value: number | undefined): number | undefined {
  if (value === undefined) return undefined;
  if (!Number.isSafeInteger(value) || value === 0) {
    throw new LicenceError(option, `must be epoch seconds or negative seconds relative to now, got ${String(value)}`);
  }
  return value;
}

/**
 * Validates options and applies the defaults above. Errors name the CLI flag
 * (LicenceError.option) because that is what an operator can change.
 */
export function licenceFromOptions(opts: NewKeyOptions, keyHash: Buffer, fingerprint: string, created: number): Licence {
  const q = opts.quota as { kind: string; limit?: number };
  let quotaKind: QuotaKind;
  let quotaLimit: number | undefined;
  switch (q.kind) {
    case 'unlimited':
      quotaKind = 'unlimited';
      break;
    case 'daily':
    case 'hourly':
    case 'block':
      quotaKind = q.kind;
      quotaLimit = positiveInt(`--${q.kind}`, q.limit ?? NaN);
      break;
    default:
      throw new LicenceError('--daily|--hourly|--block|--unlimited', `unknown quota kind "${q.kind}"`);
  }
  const trial = quotaKind === 'hourly';
  const resultsMax = positiveInt('--results-max', opts.resultsMax, LIMITS.resultsMaxCeiling)
    ?? (trial ? LIMITS.trialResultsMax : LIMITS.resultsDefault);
  const offsetMax = positiveInt('--offset-max', opts.offsetMax)
    ?? (trial ? undefined : resultsMax * LIMITS.offsetMaxPerResultsMax);
  let burstSize: number | undefined;
  let burstWindowSec: number | undefined;
  if (opts.burst !== undefined) {
    burstSize = positiveInt('--burst', opts.burst.size, LIMITS.burstSizeMax);
    burstWindowSec = positiveInt('--burst-window', opts.burst.windowSec, LIMITS.burstWindowSecMax);
    if (burstSize === undefined || burstWindowSec === undefined) {
      throw new LicenceError('--burst', '--burst and --burst-window go together');
    }
  }
  const timeFenceAfter = fence('--time-fence-after', opts.timeFenceAfter);
  const timeFenceBefore = fence('--time-fence-before', opts.timeFenceBefore);
  if (timeFenceAfter !== undefined && timeFenceBefore !== undefined &&
      (timeFenceAfter < 0) === (timeFenceBefore < 0) && timeFenceAfter >= timeFenceBefore) {
    throw new LicenceError('--time-fence-after', `${timeFenceAfter} leaves nothing visible before --time-fence-before ${timeFenceBefore}`);
  }
  const allowCidrs = opts.allowCidrs ?? [];
  if (allowCidrs.length > LIMITS.allowCidrsMax) throw new LicenceError('--allow-cidr', `at most ${LIMITS.allowCidrsMax} CIDRs per key`);
  for (const c of allowCidrs) parseAllowCidr(c);
  return Object.freeze({
    keyHash,
    fingerprint,
    created,
    quotaKind,
    quotaLimit,
    expires: positiveInt('--expires', opts.expires),
    resultsMax,
    offsetMax,
    burstSize,
    burstWindowSec,
    maxConcurrent: positiveInt('--max-concurrent', opts.maxConcurrent, LIMITS.keyConcurrentMax),
    timeFenceAfter,
    timeFenceBefore,
    private: opts.private === true,
    allowCidrs: Object.freeze([...allowCidrs]),
    v2: opts.v2 !== false,
    revoked: undefined,
  });
}
