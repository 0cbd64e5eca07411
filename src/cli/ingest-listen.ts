// `rrscan ingest --listen`: the live dnstap receiver (src/ingest/live)
// until a signal, with background compaction and, when asked, its metrics
// and health on a port of their own.

import type { IngestMetricSources } from '../ingest/live/live-metrics.js';
import { LiveReceiver, type ReceiverOptions } from '../ingest/live/receiver.js';
import type { Log } from '../lib/log.js';
import type { MetricsListener, ReadinessCheck } from '../lib/metrics-listener.js';
import { AutoCompactor } from '../shard/auto-compactor.js';
import type { TieredPolicy } from '../shard/compaction-policy.js';

/**
 * `rrscan ingest --listen`: prints one `rrscan ingest listening on ADDR` line
 * per address (tcp:HOST:0 with its real port; tests read these lines), runs
 * until SIGTERM or SIGINT, then publishes what it holds and exits 0 (1 when
 * RRsets were lost: a failed flush whose last try, at shutdown, failed too).
 */
export async function receiveUntilSignal(live: Omit<ReceiverOptions, 'log'>, compaction: Partial<TieredPolicy> | undefined,
  metrics: { host: string; port: number } | undefined): Promise<void> {
  const dataDir = live.dataDir;
  // The handlers go in before the addresses are printed: until a listener
  // exists the signal's default action kills the process, and whoever read
  // the addresses may signal at once.
  const signalled = new Promise<void>((resolve) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  const { log } = await import('../server/log.js');
  const receiver = await LiveReceiver.start({ ...live, log });
  // Every flush publishes a small shard; the compactor keeps their number
  // logarithmic in the data (compaction-policy.ts) on a thread of its own.
  const compactor = compaction === undefined ? undefined : new AutoCompactor({ dataDir, policy: compaction, log });
  compactor?.start();
  let stopping = false;
  const listener = metrics === undefined ? undefined : await startMetrics(metrics, {
    receiver: () => receiver.totals(), compactor: compactor === undefined ? undefined : () => compactor.totals,
  }, () => Promise.resolve({ notReady: stopping ? 'stopping' : undefined, degraded: undefined }), log);
  if (listener !== undefined) console.log(`rrscan metrics at ${listener.url}/metrics (health: /healthz, /readyz)`);
  for (const a of receiver.addresses) console.log(`rrscan ingest listening on ${a}`);
  await signalled;
  stopping = true;
  const [t] = await Promise.all([receiver.stop(), compactor?.stop()]);
  listener?.close();
  console.log(`ingest: stopped; ${t.senders} sender(s), ${t.frames} frames, ${t.published.rrsets} RRsets published in ` +
    `${t.published.shards} shard(s), ${t.outOfBailiwick} records out of bailiwick, ${t.rejected} frames rejected`);
  if (t.published.lostRrsets > 0) {
    // The log says why each failed; the exit code tells a supervisor that data was lost. A failed flush that
    // a retry published lost nothing: it shows in the log and the metrics, not here.
    console.error(`rrscan ingest: ${t.published.lostRrsets} RRsets lost (${t.published.failedFlushes} flush attempt(s) failed)`);
    process.exitCode = 1;
  }
}

/** The metrics listener of `ingest --listen --metrics-port N`, loaded only then (prom-client, uWebSockets.js's native build). */
async function startMetrics(at: { host: string; port: number }, sources: IngestMetricSources, ready: ReadinessCheck,
  log: Log): Promise<MetricsListener> {
  const { startIngestMetrics } = await import('../ingest/live/live-metrics.js');
  return startIngestMetrics(at, sources, ready, log);
}
