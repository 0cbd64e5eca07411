// SearchBackend: the seam between the search layer and the data.
//
// The search layer (flex-search.ts, lookup-search.ts) validates nothing and
// knows no storage: it asks a backend to plan a query, and later to open the
// plan's sorted sources (sources.ts), which it merges, pages and writes to a
// ResultSink. The local shards and scan workers (local/local-backend.ts)
// and ClickHouse (clickhouse/clickhouse-backend.ts) implement it; which one
// a server answers from is chosen in one place (open-backend.ts).
//
// Planning happens before the request is charged, opening after: a backend
// that cannot take a search now says so from plan (ApiError OVERLOADED, a
// 503 that costs the client no quota), and nothing runs until open.

import type { Registry } from 'prom-client';
import type { FlexQuery } from '../query/flex-query.js';
import type { LookupQuery } from '../query/lookup-query.js';
import type { Effective } from '../query/params.js';
import type { WatchQuery } from '../query/watch-query.js';
import type { FlexSource, LookupSource, OpenSources, SourceEvents } from './sources.js';
import type { WatchPlan } from './watch-stream.js';

/**
 * A planned search holds the data it planned over (a snapshot of shards)
 * until exactly one of: its sources are opened and then closed, or it is
 * cancelled (the charge refused the request, or the pattern did not compile).
 * Opening may settle later (the data is still being verified at start-up);
 * the search waits for it within its deadline.
 */
interface Plan<S extends FlexSource | LookupSource> {
  open(events: SourceEvents): OpenSources<S> | Promise<OpenSources<S>>;
  cancel(): void;
}

export interface FlexPlan extends Plan<FlexSource> {
  /** RE2's own words when the pattern or exclude does not compile: the answer is an in-stream `failed`. */
  readonly error: string | undefined;
}

export type LookupPlan = Plan<LookupSource>;

/** What the server logs about a backend once it is open. */
export interface BackendDescription {
  /** The start-up line, at info: its message and members. */
  readonly message: string;
  readonly fields: Record<string, unknown>;
  /**
   * Set when the tier holds no data at all, so that every search finds
   * nothing until some is ingested: the warning the server logs (and
   * `rrscan serve` repeats on stderr in words of its own).
   */
  readonly empty?: { readonly message: string; readonly fields: Record<string, unknown> };
}

export interface SearchBackend {
  /** Plans a flexible search over the data as it is now; throws ApiError OVERLOADED when it cannot take it. */
  planFlex(q: FlexQuery, eff: Effective): FlexPlan;
  /** Plans a standard search (lookup or summarize) over the data as it is now; fences are the search layer's. */
  planLookup(q: LookupQuery, eff: Effective): LookupPlan;
  /**
   * Plans a standing watch (README "Standing watches"): the tier finds the
   * tuples its data newly holds and hands them to the watches it keeps
   * (watch-hub.ts), and catches up from `q.since` first when asked. Throws
   * ApiError OVERLOADED past LIMITS.watchesMax. Optional: a tier without it
   * answers the watch endpoint with the front end's 404.
   */
  planWatch?(q: WatchQuery, eff: Effective): WatchPlan;
  /** What the server logs about the data once the backend is open. */
  describe(): BackendDescription;
  /**
   * Why searches cannot be answered now (no shards; the data tier not
   * answering), or undefined: the server's /readyz. Cheap, and bounded by
   * LIMITS.clickhouseConnectTimeoutMs where it asks another server.
   */
  notReady(): Promise<string | undefined>;
  /**
   * What the backend serves without while it is ready (shards quarantined),
   * for /readyz's body and the log, or undefined. Optional: a tier that has
   * no partial state leaves it out.
   */
  degraded?(): string | undefined;
  /**
   * Adds the tier's own Prometheus series (its pools, data, watches) to the
   * server's registry (server/metrics.ts), each read when scraped
   * (lib/prometheus.ts). Optional: a tier without any leaves it out.
   */
  registerMetrics?(registry: Registry): void;
  close(): Promise<void>;
}
