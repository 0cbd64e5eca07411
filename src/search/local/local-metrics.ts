// The local tier's Prometheus series, added to the server's registry by
// LocalBackend.registerMetrics (backend.ts): the scan pool, the shard set,
// the background scrub and the standing watches' feed. Each reads the plain
// counters those parts keep, and only when scraped (lib/prometheus.ts).
// Gauges of the shared data (shards, generation, data age) say how the
// supervisor of --processes N combines its members' values: every member
// maps the same files, so the largest (or, for the age, the smallest).

import type { Registry } from 'prom-client';
import { counter, gauge, one } from '../../lib/prometheus.js';
import { watchHubMetrics } from '../watch-metrics.js';
import type { LocalWatchStats } from './local-watch-feed.js';
import type { ScanPoolStats } from './scan-pool.js';
import type { ScrubStats } from './shard-scrub.js';
import type { ShardSetStats } from './shard-set.js';

export interface LocalBackendStats {
  readonly shards: ShardSetStats;
  readonly pool: ScanPoolStats;
  readonly scrub: ScrubStats | undefined;
  /** Standing watches, once one has been opened. */
  readonly watches: LocalWatchStats | undefined;
}

export function localMetrics(registry: Registry, stats: () => LocalBackendStats): void {
  poolMetrics(registry, () => stats().pool);
  damageMetrics(registry, () => stats().shards);
  scrubMetrics(registry, () => stats().scrub);
  dataMetrics(registry, () => stats().shards);
  watchHubMetrics(registry, () => stats().watches);
  watchFeedMetrics(registry, () => stats().watches);
}

function poolMetrics(registry: Registry, pool: () => ScanPoolStats): void {
  gauge(registry, 'rrscan_scan_workers', 'Scan worker threads', [], () => one(pool().threads));
  gauge(registry, 'rrscan_scan_tasks', 'Scan tasks running on a worker or queued for one', ['state'], () => {
    const p = pool();
    return [[{ state: 'running' }, p.running], [{ state: 'queued' }, p.queued]];
  });
  counter(registry, 'rrscan_scan_tasks_started_total', 'Scan tasks handed to the pool (resumed parts count again)', [],
    () => one(pool().started));
  counter(registry, 'rrscan_scan_turns_total', 'Scan tasks that gave their worker up when their turn (--scan-turn-ms) was used', [],
    () => one(pool().turns));
  counter(registry, 'rrscan_scan_worker_busy_seconds_total', 'Wall time scan workers were held by tasks, credit waits included', [],
    () => one(pool().heldSeconds));
  counter(registry, 'rrscan_scan_worker_credit_wait_seconds_total',
    'Of the busy time, time tasks waited for their stream to take batches (slow readers)', [], () => one(pool().creditWaitSeconds));
}

/** Shards served, and those out of service. */
function damageMetrics(registry: Registry, shards: () => ShardSetStats): void {
  gauge(registry, 'rrscan_shards', 'Shards served (those of the current manifest that are not quarantined)', [],
    () => one(shards().shards), 'max');
  gauge(registry, 'rrscan_shards_quarantined', 'Shard files the manifest lists that are out of service (corrupt, changed, missing)', [],
    () => one(shards().quarantined.length), 'max');
  counter(registry, 'rrscan_shard_faults_total', 'Reads of a mapped shard that faulted because its file shrank underneath', [],
    () => one(shards().faults));
}

/** The manifest served, its reloads, and how fresh its data is. */
function dataMetrics(registry: Registry, shards: () => ShardSetStats): void {
  gauge(registry, 'rrscan_shard_generation', 'Generation of the manifest being served', [], () => one(shards().generation), 'max');
  gauge(registry, 'rrscan_shard_mapped_bytes', 'Bytes of shard files mapped, including shards a search holds after a reload', [],
    () => one(shards().mappedBytes));
  counter(registry, 'rrscan_shard_reloads_total', 'Manifest reloads that installed a new generation', [], () => one(shards().reloads));
  counter(registry, 'rrscan_shard_reload_failures_total', 'Manifest reloads refused or failed (the previous shards kept serving)', [],
    () => one(shards().reloadFailures));
  gauge(registry, 'rrscan_data_newest_observation_timestamp_seconds',
    'Newest time_last of the data served (epoch seconds; 0 with no shards)', [], () => one(shards().newestObservation ?? 0), 'max');
  gauge(registry, 'rrscan_data_newest_observation_age_seconds',
    'Seconds since the newest time_last of the data served (since the epoch with no shards)', [],
    () => one(Date.now() / 1000 - (shards().newestObservation ?? 0)), 'min');
}

/** The scrub's series; all 0 when it is off (--scrub-mib-per-s 0). */
function scrubMetrics(registry: Registry, stats: () => ScrubStats | undefined): void {
  const scrub = () => stats() ?? { bytes: 0, shards: 0, passes: 0, mismatches: 0, lastPassSeconds: 0 };
  counter(registry, 'rrscan_scrub_bytes_total', 'Bytes of shard files the background scrub read and checked', [], () => one(scrub().bytes));
  counter(registry, 'rrscan_scrub_shards_total', 'Shard files the background scrub checked', [], () => one(scrub().shards));
  counter(registry, 'rrscan_scrub_passes_total', 'Scrub passes over every served shard completed', [], () => one(scrub().passes));
  counter(registry, 'rrscan_scrub_mismatches_total', 'Shards the scrub found changed and took out of service', [],
    () => one(scrub().mismatches));
  gauge(registry, 'rrscan_scrub_last_pass_seconds', 'Wall time of the last scrub pass completed (0 before the first)', [],
    () => one(scrub().lastPassSeconds), 'max');
}

/** What the feed of local-watch-feed.ts counts; all 0 until the first watch opens. */
function watchFeedMetrics(registry: Registry, stats: () => LocalWatchStats | undefined): void {
  const feed = () => stats() ?? { transitions: 0, shards: 0, records: 0, tuples: 0, matchMs: 0, busyMs: 0, longestSliceMs: 0 };
  counter(registry, 'rrscan_watch_snapshots_matched_total',
    'Shard snapshots (a flush or ingest published, a compaction swapped in) matched while watches were open', [],
    () => one(feed().transitions));
  counter(registry, 'rrscan_watch_shards_matched_total',
    'New shards the watch matcher read (a merge of shards that left, which holds nothing new, is not read)', [],
    () => one(feed().shards));
  counter(registry, 'rrscan_watch_records_matched_total',
    'Records of new shards run against the watches\' patterns (those not held before and seen since the earliest watch)', [],
    () => one(feed().records));
  counter(registry, 'rrscan_watch_tuples_total', 'New (value, rrtype) tuples offered to watches, each once however many took it', [],
    () => one(feed().tuples));
  counter(registry, 'rrscan_watch_match_seconds_total', 'Time the watch matcher thread spent running the patterns over new shards',
    [], () => one(feed().matchMs / 1000));
  counter(registry, 'rrscan_watch_frontend_busy_seconds_total',
    'Front-end thread time spent on watches: looking up and offering matched records, and catch-ups', [],
    () => one(feed().busyMs / 1000));
  gauge(registry, 'rrscan_watch_longest_slice_seconds',
    'Longest stretch of watch work on the front-end thread between two turns given to other work', [],
    () => one(feed().longestSliceMs / 1000), 'max');
}
