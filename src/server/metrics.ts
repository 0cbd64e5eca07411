// The Prometheus metrics of one server process (prom-client), served by the
// metrics listener (metrics-listener.ts) and nowhere else.
//
// Every rrscan_ metric reads plain numbers that the parts keep for
// themselves, and only when scraped (lib/prometheus.ts): here the front
// end's ServingStats (serving-stats.ts), the gate's QuotaRefusals and
// lib/turns.ts; the data tier adds its own series (its pools, data and
// watches) through SearchBackend.registerMetrics, so that this file names
// no tier. Nothing on the request path touches prom-client: only the code
// that registers series (this file, the tiers' local-metrics.ts and
// watch-metrics.ts, the supervisor's and the live receiver's registries)
// and lib/prometheus.ts import it. Counters
// and gauges are prom-client's own, filled by their collect() callbacks;
// the two latency histograms are read-outs of ServingStats' buckets in the
// shape prom-client's registry prints (the one way to hand it bucket counts:
// its Histogram only takes observations one at a time, and prom-client's
// own cluster aggregation registers the same kind of object). Node's
// process metrics (CPU, memory, event-loop delay, GC) come from
// prom-client's collectDefaultMetrics.
//
// Scraping walks a few hundred numbers and the shard list: well under a
// millisecond of the serving thread.

import { Registry, collectDefaultMetrics, type Metric } from 'prom-client';
import type { QuotaRefusals } from '../auth/access-gate.js';
import { counter, gauge, one, type Labels, type Series } from '../lib/prometheus.js';
import type { SearchBackend } from '../search/backend.js';
import {
  FAMILIES, LATENCY_BOUNDS_SECONDS, STATUSES, TERMINATORS, type FamilyStats, type LatencyHistogram, type ServingStats,
} from './serving-stats.js';

export interface MetricSources {
  readonly serving: ServingStats;
  readonly refusals: Readonly<QuotaRefusals>;
  /** The data tier, whose registerMetrics adds its own series. */
  readonly backend: Pick<SearchBackend, 'registerMetrics'>;
  /** Streams reserved or open now. */
  readonly openStreams: () => number;
  /** Turns the front end's streams have given up (lib/turns.ts). */
  readonly frontEndTurns: () => number;
}

type HistogramSeries = readonly (readonly [Labels, LatencyHistogram])[];

/** Families that stream 200 answers (the others answer with one body). */
const STREAMING = ['flex', 'lookup'] as const;

const perFamily = (s: ServingStats, f: (fs: FamilyStats) => number, families: readonly string[] = FAMILIES): Series =>
  families.map((family) => [{ family }, f(s.families[family as keyof ServingStats['families']])]);

/** A histogram read out of LatencyHistogram buckets at scrape time, in the value shape of prom-client's metric.get(). */
class HistogramReadout {
  readonly type = 'histogram';
  readonly aggregator = 'sum';

  constructor(readonly name: string, readonly help: string, private readonly series: () => HistogramSeries) {}

  get(): object {
    const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
    for (const [labels, h] of this.series()) {
      let cumulative = 0;
      LATENCY_BOUNDS_SECONDS.forEach((le, i) => {
        cumulative += h.counts[i]!;
        values.push({ labels: { ...labels, le }, value: cumulative, metricName: `${this.name}_bucket` });
      });
      cumulative += h.counts[LATENCY_BOUNDS_SECONDS.length]!;
      values.push({ labels: { ...labels, le: '+Inf' }, value: cumulative, metricName: `${this.name}_bucket` });
      values.push({ labels, value: h.sum, metricName: `${this.name}_sum` });
      values.push({ labels, value: cumulative, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}

function histogram(registry: Registry, name: string, help: string, series: () => HistogramSeries): void {
  registry.registerMetric(new HistogramReadout(name, help, series) as unknown as Metric);
}

/** A registry holding every metric of the module comment. */
export function metricsRegistry(src: MetricSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const s = src.serving;
  requestMetrics(registry, s);
  streamMetrics(registry, s);
  refusalMetrics(registry, src);
  src.backend.registerMetrics?.(registry);
  return registry;
}

function requestMetrics(registry: Registry, s: ServingStats): void {
  counter(registry, 'rrscan_http_requests_total', 'Requests answered, by endpoint family and the HTTP status sent',
    ['family', 'code'], () => {
      const out: [Labels, number][] = [];
      for (const family of FAMILIES) {
        const by = s.families[family].byStatus;
        STATUSES.forEach((code, i) => out.push([{ family, code: String(code) }, by[i]!]));
        if (by[STATUSES.length]! > 0) out.push([{ family, code: 'other' }, by[STATUSES.length]!]);
      }
      return out;
    });
  counter(registry, 'rrscan_http_requests_abandoned_total', 'Requests whose client hung up before any status line was sent',
    ['family'], () => perFamily(s, (f) => f.abandoned));
  histogram(registry, 'rrscan_http_first_byte_seconds',
    'Time from the request to its status line being handed to the socket, by endpoint family',
    () => FAMILIES.map((family) => [{ family }, s.families[family].firstByte] as const));
}

function streamMetrics(registry: Registry, s: ServingStats): void {
  histogram(registry, 'rrscan_stream_terminator_seconds',
    'Time from the request to the terminator of its 200 stream being handed to the socket, by family and terminator',
    () => STREAMING.flatMap((family) => TERMINATORS.map((t) => [{ family, terminator: t }, s.families[family].toTerminator[t]] as const)));
  counter(registry, 'rrscan_stream_bytes_total', 'Bytes of 200 stream bodies handed to the socket', ['family'],
    () => perFamily(s, (f) => f.streamBytes, STREAMING));
  counter(registry, 'rrscan_stream_results_total',
    'Results written to 200 streams, as limit counts them (a flexible search\'s name is one whatever its rrtype lines; a summary is one)',
    ['family'],
    () => perFamily(s, (f) => f.results, STREAMING));
  counter(registry, 'rrscan_stream_keepalives_total', 'Keep-alive {} lines sent during silent stretches of a stream', ['family'],
    () => perFamily(s, (f) => f.keepAlives, STREAMING));
  counter(registry, 'rrscan_stream_slow_reader_cuts_total',
    'Streams ended without a terminator because the client stopped reading (uWS ends a response after 10 s without progress)',
    ['family'], () => perFamily(s, (f) => f.slowReaderCuts, STREAMING));
  counter(registry, 'rrscan_stream_shutdown_cuts_total',
    'Streams closed without a terminator at shutdown: their reader had not taken what came before it within --shutdown-grace-ms',
    ['family'], () => perFamily(s, (f) => f.shutdownCuts, STREAMING));
  counter(registry, 'rrscan_stream_client_hangups_total', 'Streams whose client hung up before the terminator', ['family'],
    () => perFamily(s, (f) => f.hangups, STREAMING));
}

function refusalMetrics(registry: Registry, src: MetricSources): void {
  const s = src.serving;
  counter(registry, 'rrscan_overload_refusals_total',
    '503 "Server is overloaded" answers, by cause: scan queue full, stream cap reached, key store not answering, shutting down',
    ['cause'], () => Object.entries(s.overloads).map(([cause, v]) => [{ cause }, v]));
  counter(registry, 'rrscan_quota_refusals_total',
    'Requests refused by the key\'s own limits: 429 by quota kind (burst: unlimited keys), 503 concurrency cap, 401 expired',
    ['kind'], () => Object.entries(src.refusals).map(([kind, v]) => [{ kind }, v]));
  counter(registry, 'rrscan_frontend_turns_total', 'Times a stream produced on the front-end thread let waiting work go first',
    [], () => one(src.frontEndTurns()));
  gauge(registry, 'rrscan_streams_open', 'Search streams admitted and not yet ended', [], () => one(src.openStreams()));
}
