// The quota as clients see it: the body of GET .../rate_limit and the
// X-RateLimit-* headers of data responses (compat.md "rate_limit").
//
// Contract, per quota kind (keys always in this order):
//   daily/hourly  {"rate":{"reset":<next period start>,"expires":<epoch>|"n/a","limit":N,"remaining":n,...}}
//   block         {"rate":{"reset":"n/a","expires":<epoch>|"n/a","limit":N,"remaining":n,...}}
//   unlimited     {"rate":{"reset":"n/a","expires":<epoch>|"n/a","limit":"unlimited","remaining":"n/a",...}}
// followed by "results_max":R, then "offset_max":O only when offsets are
// allowed, then "burst_size" and "burst_window" only when the key has a burst
// quota. Those four are integers or absent, never "n/a": two common clients
// crash on a string there. The headers carry the same four first values as
// strings: X-RateLimit-Limit, -Remaining, -Reset, -Expires.

import { nextResetOf, periodUsedAt } from './licence.js';
import type { Licence, Usage } from './licence.js';

const NA = 'n/a';

export interface RateBody {
  rate: Record<string, number | string>;
}

function remainingOf(licence: Licence, periodUsed: number): number | string {
  return licence.quotaLimit === undefined ? NA : Math.max(0, licence.quotaLimit - periodUsed);
}

/** The rate_limit body for a licence and its committed usage at `now`. */
export function rateLimitBody(licence: Licence, usage: Usage, now: number): RateBody {
  const rate: Record<string, number | string> = {
    reset: nextResetOf(licence.quotaKind, now) ?? NA,
    expires: licence.expires ?? NA,
    limit: licence.quotaLimit ?? 'unlimited',
    remaining: remainingOf(licence, periodUsedAt(licence, usage, now)),
    results_max: licence.resultsMax,
  };
  if (licence.offsetMax !== undefined) rate.offset_max = licence.offsetMax;
  if (licence.burstSize !== undefined && licence.burstWindowSec !== undefined) {
    rate.burst_size = licence.burstSize;
    rate.burst_window = licence.burstWindowSec;
  }
  return { rate };
}

/** The X-RateLimit-* headers after a request was charged, `periodUsed` counting it. */
export function quotaHeaders(licence: Licence, periodUsed: number, now: number): ReadonlyArray<readonly [string, string]> {
  return Object.freeze([
    ['X-RateLimit-Limit', String(licence.quotaLimit ?? 'unlimited')],
    ['X-RateLimit-Remaining', String(remainingOf(licence, periodUsed))],
    ['X-RateLimit-Reset', String(nextResetOf(licence.quotaKind, now) ?? NA)],
    ['X-RateLimit-Expires', String(licence.expires ?? NA)],
  ] as const);
}
