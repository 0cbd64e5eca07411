// What the front end has served, as plain numbers: incremented on the
// serving thread as requests are answered, read by the metrics registry
// (metrics.ts) only when /metrics is scraped.
//
// Why not prom-client's own counters and histograms on the request path:
// each inc() or observe() of a labelled metric validates its labels and
// builds a label string to find its series, even through a child made with
// labels(). Here every series is an array slot or a field chosen by the
// endpoint family once per request (Exchange.family), so answering a request
// costs a few additions and one bucket search over 17 bounds.
//
// Contract: one FamilyStats per endpoint family, shared by every request of
// that family. A request is counted once, by the status line that went out
// (answered), or as abandoned when the client left before any did. The
// time to first byte runs from the handler's start (Exchange.started) to the
// moment the status line is handed to uWS; the time to terminator, for 200
// streams, to the moment the terminator is.

import type { Endpoint } from '../auth/access-gate.js';
import type { Terminator } from '../render/saf.js';

/** Endpoint families: summarize counts as lookup (the same standard-search path); ping apart; anything unrouted as other. */
export type Family = Exclude<Endpoint, 'summarize'> | 'ping' | 'other';
export const FAMILIES = ['flex', 'lookup', 'rate_limit', 'ping', 'other'] as const satisfies readonly Family[];
/** Compiles only while every Family is in FAMILIES (the `satisfies` above checks the other way). */
export const EVERY_FAMILY_LISTED: [Exclude<Family, (typeof FAMILIES)[number]>] extends [never] ? true : never = true;

/** Every status the front end writes (wire.ts REASONS); anything else would count under the last slot. */
export const STATUSES = [200, 204, 400, 401, 403, 404, 415, 416, 429, 500, 503] as const;
const OTHER_STATUS = STATUSES.length;
/** STATUSES slot by status, one array read per answer. */
const STATUS_SLOT = new Uint8Array(600).fill(OTHER_STATUS);
STATUSES.forEach((status, i) => { STATUS_SLOT[status] = i; });

function statusSlot(status: number): number {
  return status >= 0 && status < STATUS_SLOT.length ? STATUS_SLOT[status]! : OTHER_STATUS;
}

/**
 * Upper bounds of the latency buckets, in seconds: from a cached exact
 * lookup (about 0.2 ms on the server) to the longest a search may run
 * (LIMITS.searchTimeoutMs, 120 s). A typed array: a bucket search over a
 * plain or frozen array read ten times slower for values in the last
 * buckets (bench/micro/metrics-hot-path.ts).
 */
export const LATENCY_BOUNDS_SECONDS: Readonly<Float64Array> = Float64Array.of(
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120,
);

/** Counts per bucket (not cumulative; the last slot is above every bound) and their sum. */
export class LatencyHistogram {
  readonly counts = new Float64Array(LATENCY_BOUNDS_SECONDS.length + 1);
  sum = 0;

  observe(seconds: number): void {
    const bounds = LATENCY_BOUNDS_SECONDS;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]!) i++;
    this.counts[i]!++;
    this.sum += seconds;
  }
}

export const TERMINATORS: readonly Terminator[] = ['succeeded', 'limited', 'failed'];

/** One endpoint family's counters. */
export class FamilyStats {
  /** Requests answered, by STATUSES slot (the last: any other status). */
  readonly byStatus = new Float64Array(STATUSES.length + 1);
  /** Requests whose client hung up before any status line went out. */
  abandoned = 0;
  readonly firstByte = new LatencyHistogram();
  /** Time to the terminator of 200 streams, by terminator. */
  readonly toTerminator: Readonly<Record<Terminator, LatencyHistogram>> = {
    succeeded: new LatencyHistogram(), limited: new LatencyHistogram(), failed: new LatencyHistogram(),
  };
  /** Bytes of 200 stream bodies handed to uWS. */
  streamBytes = 0;
  /** Results written to 200 streams, as `limit` counts them: a flexible search's name is one whatever its rrtype lines; a summary one. */
  results = 0;
  keepAlives = 0;
  /** Streams uWS ended while the client was not reading (no progress for its timeout): no terminator. */
  slowReaderCuts = 0;
  /** Streams the server closed at shutdown, their reader not having taken what came before the terminator within the grace. */
  shutdownCuts = 0;
  /** Streams whose client hung up before the terminator while reading. */
  hangups = 0;

  constructor(readonly family: Family) {}

  /** A status line went out at `nowMs` (performance.now()) for a request started at `startedMs`. */
  answered(status: number, startedMs: number, nowMs: number): void {
    this.byStatus[statusSlot(status)]!++;
    this.firstByte.observe((nowMs - startedMs) / 1000);
  }

  terminated(cond: Terminator, startedMs: number, nowMs: number): void {
    this.toTerminator[cond].observe((nowMs - startedMs) / 1000);
  }
}

/** Why a request got 503 "Server is overloaded": the capacity it found full, or the key store not answering. */
export type OverloadCause = 'scan_queue' | 'streams' | 'key_store' | 'shutdown';

export class ServingStats {
  readonly families: Readonly<Record<Family, FamilyStats>> = {
    flex: new FamilyStats('flex'), lookup: new FamilyStats('lookup'), rate_limit: new FamilyStats('rate_limit'),
    ping: new FamilyStats('ping'), other: new FamilyStats('other'),
  };
  readonly overloads: Record<OverloadCause, number> = { scan_queue: 0, streams: 0, key_store: 0, shutdown: 0 };
}
