// The live receiver's aggregator and flusher: observations fold into a
// ShardSpiller (the aggregator every ingest uses) that is published as a
// new shard through the one manifest swap (shard/manifest.ts), every
// --flush-seconds or as soon as it holds --memory-rrsets RRsets.
//
// A flush hands the held spiller off and starts a fresh one at once, so
// receiving goes on while the shard is built, written, fsynced and swapped
// in: the aggregated columns move to a worker thread (workers/live-flush.ts;
// their buffers are transferred, only the interned strings are copied),
// which builds and writes the shard file; this thread then publishes it.
// One flush runs at a time; while it does, the fresh spiller may fill to its
// budget too, and then the receiver pauses every sender (`over`) until the
// flush is done: memory is bounded by two budgets' worth of RRsets.
//
// Crash safety is the manifest's: a shard is visible only once listed, a
// process killed before the swap leaves files named after its writer lock,
// which the next swap by anyone (the restarted receiver's first flush)
// deletes. A flush that fails (a full disk) deletes what it wrote, logs the
// RRsets it lost and the receiver goes on; the next flush tries again with
// new data.

import { performance } from 'node:perf_hooks';
import { Piscina } from 'piscina';
import { workerFile } from '../../lib/threads.js';
import type { Observation } from '../../model/observation.js';
import type { WriterLock } from '../../shard/file-lock.js';
import { dataBuffers, type RrsetTable, type RrsetTableData } from '../../shard/rrset-table.js';
import { ShardSpiller, type WrittenShard } from '../../shard/shard-spiller.js';
import type { LiveLog } from './log.js';

/** One flush for the worker thread (workers/live-flush.ts). */
export interface LiveFlushTask {
  table: RrsetTableData;
  dataDir: string;
  label: string;
  now: number;
  /** The receiver's WriterLock id, which names the shard file. */
  writer: string;
}

export interface PublishTotals {
  flushes: number;
  failedFlushes: number;
  shards: number;
  rrsets: number;
  records: number;
  /** RRsets lost by failed flushes. */
  lostRrsets: number;
}

export class LivePublisher {
  private spiller: ShardSpiller;
  private flushing: Promise<void> | undefined;
  /** One thread, kept for the receiver's life: flushes run one at a time. */
  private readonly pool = new Piscina({
    filename: workerFile('live-flush'), minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: 1, idleTimeout: Infinity,
  });
  readonly totals: PublishTotals = { flushes: 0, failedFlushes: 0, shards: 0, rrsets: 0, records: 0, lostRrsets: 0 };

  /** `drained`: called after each flush, when the receiver may resume paused senders. */
  constructor(private readonly dataDir: string, private readonly label: string, readonly memoryRrsets: number,
    private readonly writer: WriterLock, private readonly log: LiveLog, private readonly drained: () => void) {
    this.spiller = this.fresh();
  }

  private fresh(): ShardSpiller {
    return new ShardSpiller(this.dataDir, this.label, Math.floor(Date.now() / 1000), this.memoryRrsets, this.writer.id);
  }

  /** RRsets held, not yet handed to a flush. */
  get held(): number {
    return this.spiller.held;
  }

  /** True while the held RRsets are at the budget: senders should wait for the running flush. */
  get over(): boolean {
    return this.spiller.held >= this.memoryRrsets;
  }

  /** A flush is running (the interval timer then leaves its turn out rather than queue behind it). */
  get busy(): boolean {
    return this.flushing !== undefined;
  }

  take(o: Observation): void {
    if (this.spiller.hold(o) >= this.memoryRrsets && this.flushing === undefined) void this.flush('memory');
  }

  /** Publishes what is held (after the running flush, if any); resolves when it is published or has failed. */
  async flush(reason: string): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.spiller.held === 0) return;
    const s = this.spiller;
    this.spiller = this.fresh();
    this.flushing = this.publish(s, reason).finally(() => {
      this.flushing = undefined;
      if (this.over) void this.flush('memory');
      this.drained();
    });
    await this.flushing;
  }

  /** Waits for the running flush, then publishes the rest. */
  async close(): Promise<void> {
    await this.flush('shutdown');
    await this.pool.destroy();
  }

  /** Builds and writes `table`'s shard on the worker thread, moving the table's memory there. */
  private write(table: RrsetTable, now: number): Promise<WrittenShard> {
    const data = table.data();
    const task: LiveFlushTask = { table: data, dataDir: this.dataDir, label: this.label, now, writer: this.writer.id };
    return this.pool.run(task, { transferList: dataBuffers(data) }) as Promise<WrittenShard>;
  }

  private async publish(s: ShardSpiller, reason: string): Promise<void> {
    const started = performance.now();
    const rrsets = s.held;
    const records = s.records;
    try {
      // Handing the table to the worker (copying its strings) is the part that holds the receiving thread.
      const writing = s.spillWith((table) => this.write(table, s.now));
      const blockedMs = Math.round(performance.now() - started);
      await writing;
      const shards = await s.publish();
      const t = this.totals;
      t.flushes++;
      t.shards += shards.length;
      t.rrsets += rrsets;
      t.records += records;
      this.log.info({ event: 'flush', reason, rrsets, records, shards, blockedMs, ms: Math.round(performance.now() - started),
        published: { ...t } }, 'published');
    } catch (err) {
      await s.abort();
      this.totals.failedFlushes++;
      this.totals.lostRrsets += rrsets;
      this.log.error({ event: 'flush-failed', reason, lostRrsets: rrsets, err: (err as Error).message },
        'flush failed; its RRsets are lost, the receiver goes on');
    }
  }
}
