// ShardScrubber: passes over the served shards, each file re-read and its
// checksums checked again (shard/scrub.ts) on a thread of its own, at most
// `bytesPerSecond` (serve --scrub-mib-per-s). A shard whose bytes no longer
// match is taken out of service (ShardSet.takeOutOfService): searches that
// hold it end `failed`, later ones are answered without it, and it is
// quarantined until its file changes.
//
// A pass visits the shards of the snapshot current when it starts, one at a
// time; passes start LIMITS.scrubPassIntervalMs apart at most (a small data
// set is not re-read in a loop), the first one interval after start-up
// (opening verified every shard then). Each pass is logged with its figures,
// and the totals are metrics (rrscan_scrub_*).

import path from 'node:path';
import { LIMITS } from '../../config/limits.js';
import type { Log } from '../../lib/log.js';
import { workerPool, type WorkerPool } from '../../lib/threads.js';
import type { ScrubResult, ScrubTask } from '../../shard/scrub.js';
import type { ShardReader } from '../../shard/shard-reader.js';
import type { ShardSet } from './shard-set.js';

export interface ScrubStats {
  /** Bytes read and checked. */
  bytes: number;
  /** Shard files checked (intact or not). */
  shards: number;
  /** Passes completed. */
  passes: number;
  /** Shards found changed and taken out of service. */
  mismatches: number;
  /** Wall time of the last pass completed, in seconds (0 before the first). */
  lastPassSeconds: number;
}

export interface ScrubOptions {
  /** 0: as fast as the disk goes. */
  bytesPerSecond: number;
  /** A pass starts at most this often (default LIMITS.scrubPassIntervalMs). */
  passIntervalMs?: number;
}

export class ShardScrubber {
  private readonly pool: WorkerPool<'scrub'>;
  private readonly bytesPerSecond: number;
  private readonly passIntervalMs: number;
  private stopped = false;
  private wake: (() => void) | undefined;
  private readonly totals: ScrubStats = { bytes: 0, shards: 0, passes: 0, mismatches: 0, lastPassSeconds: 0 };

  constructor(private readonly shards: ShardSet, opts: ScrubOptions, private readonly log: Log) {
    this.bytesPerSecond = opts.bytesPerSecond;
    this.passIntervalMs = opts.passIntervalMs ?? LIMITS.scrubPassIntervalMs;
    // One thread, started for a pass and let go when idle: a scrub never competes with itself.
    this.pool = workerPool('scrub', {
      minThreads: 0, maxThreads: 1, maxQueue: 1, concurrentTasksPerWorker: 1, idleTimeout: 1_000,
    });
  }

  start(): void {
    void this.run().catch((err: unknown) => {
      if (!this.stopped) this.log.error({ err }, 'shard scrub stopped');
    });
  }

  stats(): ScrubStats {
    return { ...this.totals };
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.pool.destroy();
  }

  private async run(): Promise<void> {
    // Every shard was verified when it was opened: the first pass can wait its turn.
    await this.sleep(this.passIntervalMs);
    while (!this.stopped) {
      const started = performance.now();
      const pass = { shards: 0, bytes: 0 };
      for (const reader of this.shards.current().shards) {
        if (this.stopped) return;
        if (!this.shards.serves(reader)) continue;
        const r = await this.scrub(reader);
        if (r.outcome === 'replaced') continue;
        pass.shards++;
        pass.bytes += r.bytes;
        if (r.outcome === 'corrupt') {
          this.totals.mismatches++;
          this.shards.takeOutOfService(reader, `scrub: ${r.reason}`);
        }
      }
      const seconds = (performance.now() - started) / 1000;
      this.totals.passes++;
      this.totals.lastPassSeconds = seconds;
      this.log.info({ ...pass, seconds: Math.round(seconds * 1000) / 1000, mibPerSecond: Math.round(pass.bytes / 1048576 / seconds) },
        'scrub pass complete');
      await this.sleep(this.passIntervalMs - seconds * 1000);
    }
  }

  private async scrub(reader: ShardReader): Promise<ScrubResult> {
    const file = path.join(this.shards.dataDir, reader.name);
    const task: ScrubTask = { file, identity: reader.identity, bytesPerSecond: this.bytesPerSecond };
    const r = await this.pool.run(task);
    this.totals.bytes += r.bytes;
    if (r.outcome !== 'replaced') this.totals.shards++;
    return r;
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.stopped) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      timer.unref();
      this.wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
