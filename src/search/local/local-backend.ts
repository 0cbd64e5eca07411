// The local data backend: the data directory's shards (memory-mapped, hot
// reloaded on manifest swaps; shard-set.ts) and the pool of scan workers
// (scan-pool.ts). Flexible searches scan on the workers; standard searches
// read the shards' indexes on the calling thread (lookup-sources.ts).

import { ApiError } from '../../errors/catalogue.js';
import type { FlexQuery } from '../../query/flex-query.js';
import type { LookupQuery } from '../../query/lookup-query.js';
import type { Effective } from '../../query/params.js';
import type { BackendDescription, FlexPlan, LookupPlan, SearchBackend } from '../backend.js';
import { openFlexSources } from './flex-sources.js';
import { compileFlex } from '../flex-patterns.js';
import { planFlex } from './flex-plan.js';
import { openLookupSources } from './lookup-sources.js';
import type { Registry } from 'prom-client';
import { localMetrics, type LocalBackendStats } from './local-metrics.js';
import { ScanPool, type ScanPoolOptions } from './scan-pool.js';
import { ShardSet, type Snapshot } from './shard-set.js';
import { silentLog, type Log } from '../../lib/log.js';
import { ShardScrubber } from './shard-scrub.js';
import type { Openable } from '../paginator.js';
import type { OpenSources } from '../sources.js';
import type { WatchQuery } from '../../query/watch-query.js';
import type { WatchPlan } from '../watch-stream.js';
import { LocalWatchFeed } from './local-watch-feed.js';

export interface LocalBackendOptions extends ScanPoolOptions {
  dataDir: string;
  /** Where the shard set reports reloads, refused manifests and quarantined shards. */
  log?: Log;
  /** The background scrub's read rate (shard-scrub.ts); 0 or absent: no scrub. */
  scrubBytesPerSecond?: number;
}

/**
 * A plan made once the shards have been verified at start-up: the search
 * waits for them (its deadline running, keep-alives going out) instead of
 * being answered from shards nobody has checked.
 */
function later<S>(plan: Promise<Openable<S>>): Openable<S> {
  return {
    open: (events) => plan.then((p) => p.open(events)),
    cancel: () => void plan.then((p) => p.cancel(), () => undefined),
  };
}

export class LocalBackend implements SearchBackend {
  private readonly shards: ShardSet;
  private readonly pool: ScanPool;
  private readonly scrubber: ShardScrubber | undefined;
  private readonly log: Log;
  private readonly dataDir: string;
  /** Standing watches: made with the first one, fed by every snapshot the shard set installs. */
  private watchFeed: LocalWatchFeed | undefined;

  /** Loads the current shards (a corrupt one is quarantined, not fatal) and starts watching for new ones. */
  constructor(opts: LocalBackendOptions) {
    const log = opts.log ?? silentLog;
    this.log = log;
    this.dataDir = opts.dataDir;
    this.shards = new ShardSet(opts.dataDir, log);
    this.shards.load();
    this.shards.watch(() => this.watchFeed?.published());
    this.pool = new ScanPool(opts);
    const rate = opts.scrubBytesPerSecond ?? 0;
    this.scrubber = rate > 0 ? new ShardScrubber(this.shards, { bytesPerSecond: rate }, log) : undefined;
    this.scrubber?.start();
  }

  planFlex(q: FlexQuery, eff: Effective): FlexPlan {
    const patterns = compileFlex(q);
    const started = this.shards.started();
    if (started === undefined) return this.flexPlan(q, eff, patterns);
    return { error: patterns.error, ...later(started.then(() => this.flexPlan(q, eff, patterns))) };
  }

  planLookup(q: LookupQuery, eff: Effective): LookupPlan {
    const started = this.shards.started();
    return started === undefined ? this.lookupPlan(q, eff) : later(started.then(() => this.lookupPlan(q, eff)));
  }

  private flexPlan(q: FlexQuery, eff: Effective, patterns: ReturnType<typeof compileFlex>): FlexPlan {
    const snapshot = this.shards.current();
    const plan = planFlex(q, patterns, eff.fence, snapshot.shards, this.pool.threads);
    if (this.pool.wouldOverflow(plan.ranges.length)) throw new ApiError('OVERLOADED');
    const want = eff.offset + eff.limit + 1;
    const lease = this.lease();
    return {
      error: patterns.error,
      open: (events) => lease.checked(openFlexSources(plan, q, eff.fence, want, this.pool, events, lease.end)),
      cancel: lease.end,
    };
  }

  private lookupPlan(q: LookupQuery, eff: Effective): LookupPlan {
    // lease() spelled out: a lookup is planned and opened per request, and the spread in checked() was a
    // twentieth of an exact lookup's JavaScript (bench/micro/front-end.ts).
    const lease = this.shards.lease();
    let held = true;
    const end = (): void => {
      if (held) this.shards.release(lease);
      held = false;
    };
    return {
      open: (events) => ({
        sources: openLookupSources(lease.snapshot.shards, q, { fence: eff.fence, humantime: q.humantime }, events),
        close: end,
        damaged: () => this.shards.damageOf(lease),
      }),
      cancel: end,
    };
  }

  /**
   * Leases the current snapshot until `end` is called (once; later calls do
   * nothing). `checked` gives the sources the shard set's verdict on what
   * they read (OpenSources.damaged).
   */
  private lease(): { snapshot: Snapshot; end: () => void; checked<S>(o: OpenSources<S>): OpenSources<S> } {
    const lease = this.shards.lease();
    let held = true;
    return {
      snapshot: lease.snapshot,
      end: () => {
        if (held) this.shards.release(lease);
        held = false;
      },
      checked: (o) => ({ ...o, damaged: () => this.shards.damageOf(lease) }),
    };
  }

  planWatch(q: WatchQuery, eff: Effective): WatchPlan {
    this.watchFeed ??= new LocalWatchFeed(this.shards, this.log);
    return this.watchFeed.plan(q, eff);
  }

  describe(): BackendDescription {
    const snap = this.shards.current();
    const st = this.shards.stats();
    const fields = {
      backend: 'local', shards: snap.shards.length, verifying: st.verifying, quarantined: st.quarantined.length,
      generation: snap.generation, threads: this.pool.threads,
    };
    // Served, still being verified, or quarantined: what the manifest lists.
    if (snap.shards.length + st.verifying + st.quarantined.length > 0) return { message: 'shards loaded', fields };
    const empty = { message: 'the data directory holds no shards: every search finds nothing until data is ingested',
      fields: { dataDir: this.dataDir } };
    return { message: 'shards loaded', fields, empty };
  }

  notReady(): Promise<string | undefined> {
    return Promise.resolve(this.shards.notReady());
  }

  degraded(): string | undefined {
    return this.shards.degraded();
  }

  /** The shards', the pool's, the scrub's and the watches' counters, for the metrics (read at scrape time). */
  stats(): LocalBackendStats {
    return { shards: this.shards.stats(), pool: this.pool.stats(), scrub: this.scrubber?.stats(), watches: this.watchFeed?.stats() };
  }

  registerMetrics(registry: Registry): void {
    localMetrics(registry, () => this.stats());
  }

  async close(): Promise<void> {
    await Promise.all([this.watchFeed?.close(), this.shards.close(), this.pool.close(), this.scrubber?.stop()]);
  }
}
