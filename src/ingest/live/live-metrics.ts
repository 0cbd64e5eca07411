// The Prometheus metrics of a live ingest process (`rrscan ingest --listen
// --metrics-port N`), on the operator's listener the server uses too
// (lib/metrics-listener.ts): the receiver's running totals (senders, frames,
// records, bailiwick refusals, flushes) and the background compactor's.
// Like the server's, every metric reads totals the parts keep for
// themselves, and only when scraped (lib/prometheus.ts).

import { Registry, collectDefaultMetrics } from 'prom-client';
import type { Log } from '../../lib/log.js';
import { startMetricsListener, type MetricsListener, type ReadinessCheck } from '../../lib/metrics-listener.js';
import { counter, gauge, one } from '../../lib/prometheus.js';
import type { CompactorTotals } from '../../shard/auto-compactor.js';
import type { ReceiverTotals } from './receiver.js';

export interface IngestMetricSources {
  readonly receiver: () => ReceiverTotals;
  /** Undefined when compaction runs in a process of its own (--compact off). */
  readonly compactor: (() => CompactorTotals) | undefined;
}

/** A counter without labels, read from the totals at scrape time. */
const total = (registry: Registry, name: string, help: string, read: () => number): void =>
  counter(registry, name, help, [], () => one(read()));

export function ingestMetricsRegistry(src: IngestMetricSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const r = src.receiver;
  gauge(registry, 'rrscan_ingest_senders', 'dnstap senders connected now', [], () => one(r().sendersNow));
  total(registry, 'rrscan_ingest_senders_total', 'dnstap senders that connected', () => r().senders);
  total(registry, 'rrscan_ingest_senders_failed_total', 'Senders closed for a protocol error, a limit or a malformed frame',
    () => r().sendersFailed);
  total(registry, 'rrscan_ingest_connections_refused_total', 'Connections closed at once: the most senders were connected',
    () => r().refusedConnections);
  total(registry, 'rrscan_ingest_connections_not_allowed_total', 'tcp: connections closed at accept: address outside --allow-cidr',
    () => r().notAllowedConnections);
  total(registry, 'rrscan_ingest_idle_senders_closed_total', 'Senders closed at the cap, silent the longest, to admit a new connection',
    () => r().idleSendersClosed);
  total(registry, 'rrscan_ingest_handshakes_closed_total', 'Senders closed at the cap, the oldest of too many handshakes, for a new one',
    () => r().handshakesClosed);
  total(registry, 'rrscan_ingest_frames_total', 'dnstap data frames read', () => r().frames);
  total(registry, 'rrscan_ingest_responses_total', 'DNS responses decoded from the frames', () => r().responses);
  total(registry, 'rrscan_ingest_records_total', 'RRsets observed, before aggregation', () => r().observations);
  total(registry, 'rrscan_ingest_out_of_bailiwick_total', 'Records refused as outside the response\'s bailiwick',
    () => r().outOfBailiwick);
  total(registry, 'rrscan_ingest_rejected_total', 'Frames or responses that did not decode', () => r().rejected);
  total(registry, 'rrscan_ingest_flushes_total', 'Flushes that published a shard', () => r().published.flushes);
  total(registry, 'rrscan_ingest_flushes_failed_total', 'Flush attempts that failed, retries included (their RRsets are kept for a retry)',
    () => r().published.failedFlushes);
  gauge(registry, 'rrscan_ingest_retry_rrsets', 'RRsets of a failed flush held now, waiting for its retry', [],
    () => one(r().published.retryRrsets));
  total(registry, 'rrscan_ingest_published_rrsets_total', 'RRsets published by flushes', () => r().published.rrsets);
  total(registry, 'rrscan_ingest_lost_rrsets_total', 'RRsets lost: a flush still failing at shutdown, or a flush thread that died',
    () => r().published.lostRrsets);
  const c = src.compactor;
  if (c !== undefined) {
    total(registry, 'rrscan_compaction_merges_total', 'Background merges published', () => c().merges);
    total(registry, 'rrscan_compaction_failures_total', 'Background merges that failed (retried later)', () => c().failures);
    total(registry, 'rrscan_compaction_rrsets_in_total', 'RRsets read by background merges', () => c().rrsetsIn);
    total(registry, 'rrscan_compaction_rrsets_out_total', 'RRsets written by background merges', () => c().rrsetsOut);
    total(registry, 'rrscan_compaction_bytes_out_total', 'Shard bytes written by background merges', () => c().bytesOut);
    total(registry, 'rrscan_compaction_seconds_total', 'Wall time of background merges', () => c().seconds);
  }
  return registry;
}

/** The metrics and health listener of `ingest --listen --metrics-port N`, on host:port. */
export function startIngestMetrics(at: { host: string; port: number }, sources: IngestMetricSources, ready: ReadinessCheck,
  log: Log): Promise<MetricsListener> {
  return startMetricsListener(at.host, at.port, ingestMetricsRegistry(sources), ready, log);
}
