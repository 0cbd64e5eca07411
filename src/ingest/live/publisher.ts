// The live receiver's aggregator and flusher: observations fold into a
// ShardSpiller (the aggregator every ingest uses) that is published as a
// new shard through the one manifest swap (shard/manifest.ts), every
// --flush-seconds or as soon as it holds --memory-rrsets RRsets.
//
// A flush hands the held spiller off and starts a fresh one at once, so
// receiving goes on while the shard is built, written, fsynced and swapped
// in: the aggregated columns move to a worker thread (live-flush.ts;
// their buffers are transferred, only the interned strings are copied),
// which builds and writes the shard file; this thread then publishes it.
// One flush runs at a time; while it does, the fresh spiller may fill to its
// budget too, and then the receiver pauses every sender (`over`) until the
// flush is done: memory is bounded by two budgets' worth of RRsets.
//
// Crash safety is the manifest's: a shard is visible only once listed, a
// process killed before the swap leaves files named after its writer lock,
// which the next swap by anyone (the restarted receiver's first flush)
// deletes. kill -9 thus loses what was not yet published, nothing more.
//
// A flush that fails (a full disk) loses nothing. Its RRsets stay in memory:
// when the shard could not be written, the worker hands the table's memory
// back; when it was written but the manifest swap failed, the file stays
// (named after this receiver's writer lock, which no sweep takes while the
// lock is held) and only the swap is retried. The failed flush is retried at
// the next --flush-seconds tick or after LIMITS.liveFlushRetryMs, whichever
// comes first, before any newer data, one flush at a time as ever. Meanwhile
// the fresh spiller fills to its budget; then the receiver pauses every
// sender (`over`), as during a slow flush: memory stays within two budgets.
// While the disk stays full the senders stay paused; a DNS server's dnstap
// output then fills its own buffers and drops frames on its side, which
// rrscan cannot prevent (the dropped frames never reach it). Once a retry
// publishes, the senders resume.
//
// At shutdown a failed flush is tried once more; if that fails too, its
// RRsets are lost: logged at error level with their count, and the CLI
// exits 1 (publish.lostRrsets). The RRsets a worker thread held when it died
// are lost the same way, at once.

import { performance } from 'node:perf_hooks';
import { LIMITS } from '../../config/limits.js';
import { workerPool } from '../../lib/threads.js';
import type { Observation } from '../../model/observation.js';
import type { WriterLock } from '../../shard/file-lock.js';
import { dataBuffers, RrsetTable } from '../../shard/rrset-table.js';
import { ShardSpiller, type WrittenShard } from '../../shard/shard-spiller.js';
import type { Log } from '../../lib/log.js';
import type { LiveFlushTask } from './live-flush.js';

export interface PublishTotals {
  flushes: number;
  /** Flush attempts that failed, retries included (their RRsets are kept for a retry, or lost). */
  failedFlushes: number;
  shards: number;
  rrsets: number;
  records: number;
  /** RRsets of a failed flush held now, waiting for a retry (a level, not a total). */
  retryRrsets: number;
  /** RRsets lost: a flush still failing at shutdown, or a worker thread that died. */
  lostRrsets: number;
}

export class LivePublisher {
  private spiller: ShardSpiller;
  /** The spiller of a failed flush, kept for a retry: published before anything newer. */
  private failed: ShardSpiller | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  /** One thread, kept for the receiver's life: flushes run one at a time. */
  private readonly pool = workerPool('live-flush', {
    minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: 1, idleTimeout: Infinity,
  });
  readonly totals: PublishTotals = { flushes: 0, failedFlushes: 0, shards: 0, rrsets: 0, records: 0, retryRrsets: 0, lostRrsets: 0 };

  /** `drained`: called after each flush, when the receiver may resume paused senders. */
  constructor(private readonly dataDir: string, private readonly label: string, readonly memoryRrsets: number,
    private readonly writer: WriterLock, private readonly log: Log, private readonly drained: () => void) {
    this.spiller = this.fresh();
  }

  private fresh(): ShardSpiller {
    return new ShardSpiller(this.dataDir, this.label, Math.floor(Date.now() / 1000), this.memoryRrsets, this.writer.id);
  }

  /** RRsets held, not yet handed to a flush (a failed flush's not included: totals.retryRrsets). */
  get held(): number {
    return this.spiller.held;
  }

  /** True while the held RRsets are at the budget: senders should wait for the running (or failed) flush. */
  get over(): boolean {
    return this.spiller.held >= this.memoryRrsets;
  }

  /** A flush is running (the interval timer then leaves its turn out rather than queue behind it). */
  get busy(): boolean {
    return this.flushing !== undefined;
  }

  take(o: Observation): void {
    if (this.spiller.hold(o) >= this.memoryRrsets && this.flushing === undefined && this.failed === undefined) void this.flush('memory');
  }

  /**
   * Publishes a failed flush's RRsets, if any, then what is held (after the
   * running flush, if any); resolves when that is published or has failed.
   * A 'memory' flush leaves a failed flush alone: it is retried on the
   * interval tick or its retry timer, not on every observation past the budget.
   */
  async flush(reason: string): Promise<void> {
    while (this.flushing !== undefined) await this.flushing;
    if (this.failed === undefined ? this.spiller.held === 0 : reason === 'memory') return;
    this.flushing = this.run(reason).finally(() => {
      this.flushing = undefined;
      if (this.over && this.failed === undefined) void this.flush('memory');
      this.drained();
    });
    await this.flushing;
  }

  /** Waits for the running flush, then publishes the rest: a failed flush tried once more, lost if that fails. */
  async close(): Promise<void> {
    await this.flush('shutdown');
    clearTimeout(this.retryTimer);
    await this.pool.destroy();
  }

  private async run(reason: string): Promise<void> {
    const final = reason === 'shutdown';
    const failed = this.failed;
    if (failed !== undefined) {
      this.keep(undefined);
      // Newer data waits behind it, but at shutdown: then each gets its one try.
      if (!(await this.attempt(failed, reason, true, final)) && !final) return;
    }
    if (this.spiller.held === 0) return;
    const s = this.spiller;
    this.spiller = this.fresh();
    await this.attempt(s, reason, false, final);
  }

  /** Holds `s` (a failed flush) for a retry, or clears it; totals.retryRrsets follows. */
  private keep(s: ShardSpiller | undefined): void {
    this.failed = s;
    this.totals.retryRrsets = s?.unpublished ?? 0;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    if (s === undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      if (!this.busy) void this.flush('retry');
    }, LIMITS.liveFlushRetryMs);
  }

  /**
   * Builds and writes `table`'s shard on the worker thread, moving the
   * table's memory there; a write that failed hands it back, and it goes
   * back into `s` before this throws.
   */
  private async write(s: ShardSpiller, table: RrsetTable): Promise<WrittenShard> {
    const data = table.data();
    const task: LiveFlushTask = { table: data, dataDir: this.dataDir, label: this.label, now: s.now, writer: this.writer.id };
    const r = await this.pool.run(task, { transferList: dataBuffers(data) });
    if ('written' in r) return r.written;
    s.restore(new RrsetTable(r.table));
    throw new Error(r.failed);
  }

  /**
   * One try at publishing `s`: true when published. When it fails, `s` is
   * kept for a retry, or (`final`) its RRsets are lost.
   */
  private async attempt(s: ShardSpiller, reason: string, retry: boolean, final: boolean): Promise<boolean> {
    const started = performance.now();
    const rrsets = s.unpublished;
    const records = s.records;
    try {
      // Handing the table to the worker (copying its strings) is the part that holds the receiving thread.
      const writing = s.spillWith((table) => this.write(s, table));
      const blockedMs = Math.round(performance.now() - started);
      await writing;
      const shards = await s.publish();
      const t = this.totals;
      t.flushes++;
      t.shards += shards.length;
      t.rrsets += rrsets;
      t.records += records;
      this.log.info({ event: 'flush', reason, retry, rrsets, records, shards, blockedMs, ms: Math.round(performance.now() - started),
        published: { ...t } }, 'published');
      return true;
    } catch (err) {
      this.totals.failedFlushes++;
      const message = (err as Error).message;
      // A worker that died took the table's memory with it: only a failed write hands it back.
      const kept = s.unpublished;
      if (kept < rrsets) this.lose(rrsets - kept, reason, message);
      if (kept === 0 || final) {
        await s.abort();
        if (kept > 0) this.lose(kept, reason, message);
        return false;
      }
      this.keep(s);
      this.log.warn({ event: 'flush-failed', reason, retry, rrsets: kept, err: message, retryInMs: LIMITS.liveFlushRetryMs },
        'flush failed; its RRsets are kept and it will retry (before newer data)');
      return false;
    }
  }

  private lose(rrsets: number, reason: string, message: string): void {
    this.totals.lostRrsets += rrsets;
    this.log.error({ event: 'flush-lost', reason, lostRrsets: rrsets, err: message, published: { ...this.totals } },
      'flush failed for good; its RRsets are lost');
  }
}
