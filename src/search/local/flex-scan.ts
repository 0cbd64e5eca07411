// One flexible-search scan task, as a scan worker runs it (workers/scan.ts):
// one shard, or a record range of it, streaming unique matches back over the
// task's MessagePort.
//
// Roles (ripgrep's split): the matcher is the compiled RE2 (src/query), the
// searcher drives the blob through it (blob-searcher.ts, or the trigram
// index's candidates), and this class is the sink: it filters each matching
// record by exclude, rrtype and time fence, batches the survivors, waits for
// credits (scan-protocol.ts), and tells the searcher to stop once it has
// `want` of them, its turn is over, or the task is cancelled.

import { BroadcastChannel } from 'node:worker_threads';
import type RE2 from 're2';
import { LIMITS } from '../../config/limits.js';
import { failIf, fault } from '../../lib/faults.js';
import { inFence, isFenced, keepType } from '../../model/filters.js';
import { compilePattern } from '../../query/pattern.js';
import { blobRecord, blobLength } from '../../shard/blob.js';
import { ShardReader, type FlexColumns, type ShardHandle } from '../../shard/shard-reader.js';
import { candidates } from '../../shard/trigram-index.js';
import { everyRecord, makeMatcher, recordMatches, scanRecords } from './blob-searcher.js';
import { BatchBuilder } from './flex-batch.js';
import {
  CONTROL_CANCEL, CONTROL_CREDITS, RETIRED_SHARDS_CHANNEL, type FlexTask, type TaskTime, type WorkerMessage,
} from './scan-protocol.js';
import { TupleTimes } from './tuple-times.js';

/** First slice of a blob scan, in records (~50 KB of names); later slices follow the measured speed. */
const sliceRecordsFirst = 1_024;
/** Smallest slice: one record can be a 64 KB rdata, and per-slice overhead must stay small. */
const sliceRecordsMin = 16;

interface Compiled {
  re: RE2;
  trigrams: ReturnType<typeof compilePattern>['trigrams'];
  everyRecord: boolean;
}

/**
 * What a worker keeps between tasks: attached shards (attaching copies
 * nothing and checks nothing, but reuse saves the FlatBuffer table walk) and
 * compiled patterns, each bounded in LIMITS and evicted oldest first. A shard
 * the front end has released is dropped at once (RETIRED_SHARDS_CHANNEL
 * carries its identity).
 */
export class WorkerCache {
  private readonly shards = new Map<string, ShardReader>();
  private readonly patterns = new Map<string, Compiled>();
  private readonly retired = new BroadcastChannel(RETIRED_SHARDS_CHANNEL);

  constructor() {
    this.retired.onmessage = (m) => this.shards.delete((m as { data: string }).data);
    this.retired.unref();
  }

  /** The shard of `h`, keyed by its file's identity: a file replaced under the same name is another mapping. */
  shard(h: ShardHandle): ShardReader {
    failIf('shard-read', h.name);
    let s = this.shards.get(h.identity);
    if (!s) {
      if (this.shards.size >= LIMITS.workerShardsCachedMax) this.shards.delete(this.shards.keys().next().value!);
      s = ShardReader.attach(h);
      this.shards.set(h.identity, s);
    }
    return s;
  }

  pattern(method: 'regex' | 'glob', pattern: string): Compiled {
    const key = `${method}\u0000${pattern}`;
    let c = this.patterns.get(key);
    if (!c) {
      const p = compilePattern(method, pattern);
      c = { re: makeMatcher(p), trigrams: p.trigrams, everyRecord: p.everyRecord };
      if (this.patterns.size >= LIMITS.workerPatternsCachedMax) this.patterns.delete(this.patterns.keys().next().value!);
      this.patterns.set(key, c);
    }
    return c;
  }
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));
function hex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!];
  return s;
}

export class FlexScan {
  private readonly control: Int32Array;
  private readonly shard: ShardReader;
  private readonly cols: FlexColumns;
  private readonly main: Compiled;
  private readonly exclude: RE2 | undefined;
  /** The other shards' times of each tuple, when a fence needs them. */
  private readonly tuples: TupleTimes | undefined;
  private readonly batch = new BatchBuilder();
  private readonly from: number;
  private readonly to: number;
  private matched = 0;
  private lastFlush = performance.now();
  /**
   * Set when no credit came in time: the batch in hand still goes out (one
   * batch over the credits, no more), the scan stops, and `end` says where to
   * resume (scan-protocol.ts: waiting longer could deadlock the merge).
   */
  private paused = false;
  private readonly started = performance.now();
  /** Time spent in Atomics.wait for credits (a slow reader), reported in `end` (scan-protocol.ts TaskTime). */
  private creditWaitMs = 0;
  private turnOver = false;

  constructor(private readonly task: FlexTask, cache: WorkerCache) {
    this.control = new Int32Array(task.control);
    this.shard = cache.shard(task.shard);
    this.cols = this.columnsOf(this.shard);
    const records = blobLength(this.cols);
    this.from = Math.max(0, task.from);
    this.to = task.to < 0 ? records : Math.min(task.to, records);
    this.main = cache.pattern(task.method, task.pattern);
    this.exclude = task.exclude !== undefined ? cache.pattern(task.method, task.exclude).re : undefined;
    this.tuples = isFenced(task.fence) && task.others.length > 0
      ? new TupleTimes(task.others.map((h) => this.columnsOf(cache.shard(h)))) : undefined;
  }

  private columnsOf(s: ShardReader): FlexColumns {
    return this.task.target === 'rrnames' ? s.flexNames : s.flexRdata;
  }

  /** Runs the task to its `end` (or `error`) message; the port is closed afterwards. */
  run(): void {
    try {
      const records = blobLength(this.cols);
      const cand = candidates(this.cols.trigrams, this.main.trigrams, records, Math.floor(records * LIMITS.trigramCandidateFractionMax));
      const resumeAt = cand === 'scan' ? this.scanSlices() : this.scanCandidates(cand);
      this.flush();
      this.post({ type: 'end', cancelled: this.cancelled(), ...(resumeAt !== undefined ? { resumeAt } : {}), time: this.time() });
    } catch (err) {
      const e = err as { code?: string; message?: string };
      this.post({ type: 'error', code: e.code ?? 'INTERNAL', message: e.message ?? String(err), time: this.time() });
    } finally {
      this.task.port.close();
    }
  }

  private time(): TaskTime {
    const t: TaskTime = { heldMs: performance.now() - this.started, creditWaitMs: this.creditWaitMs };
    if (this.turnOver) t.turnOver = true;
    return t;
  }

  private post(m: WorkerMessage): void {
    this.task.port.postMessage(m);
  }

  private cancelled(): boolean {
    return Atomics.load(this.control, CONTROL_CANCEL) !== 0;
  }

  /** A partial batch older than LIMITS.scanFlushStaleMs goes out, so a slow, selective scan streams promptly. */
  private stale(): boolean {
    return this.batch.values > 0 && performance.now() - this.lastFlush > LIMITS.scanFlushStaleMs;
  }

  /** Posts the batch once a credit is there (the socket side returns one per batch written), or pauses. */
  private flush(): void {
    if (this.batch.values === 0) return;
    const ctl = this.control;
    const deadline = performance.now() + LIMITS.scanCreditWaitMs;
    for (;;) {
      const credits = Atomics.load(ctl, CONTROL_CREDITS);
      if (credits > 0 || this.cancelled()) break;
      const left = deadline - performance.now();
      if (left <= 0) {
        this.paused = true;
        break;
      }
      const t0 = performance.now();
      Atomics.wait(ctl, CONTROL_CREDITS, credits, left);
      this.creditWaitMs += performance.now() - t0;
    }
    if (this.cancelled()) return;
    // RRSCAN_FAULTS (tests only): at a batch, the thread dies or the scan throws.
    if (fault('scan-exit', this.task.pattern)) process.exit(1);
    failIf('scan-throw', this.task.pattern);
    Atomics.sub(ctl, CONTROL_CREDITS, 1);
    this.post({ type: 'batch', batch: this.batch.take() });
    this.lastFlush = performance.now();
  }

  /** Takes a record the pattern matched; false stops the scan. */
  private readonly onRecord = (i: number): boolean => {
    const cols = this.cols;
    if (this.exclude && recordMatches(this.exclude, cols, i)) return true;
    const value = blobRecord(cols, i);
    this.tuples?.seek(value);
    this.batch.beginValue(value);
    for (let e = cols.entryStarts[i]!; e < cols.entryStarts[i + 1]!; e++) {
      const t = cols.entryType[e]!;
      if (!keepType(this.task.typeFilter, t) || !this.inFence(t, e)) continue;
      if (this.task.target === 'rrnames') this.batch.nameLine(t);
      else this.batch.rdataLine(t, hex(this.shard.rdataWire(cols.link[e]!)));
    }
    if (!this.batch.endValue(value)) return true;
    this.matched++;
    if (this.batch.values >= LIMITS.batchItemsMax || this.batch.bytes >= LIMITS.writeChunkBytes) this.flush();
    return this.matched < this.task.want && !this.cancelled() && !this.paused;
  };

  /** The fence on entry e's tuple, with its times over every shard when others may hold it. */
  private inFence(t: number, e: number): boolean {
    const cols = this.cols;
    if (this.tuples === undefined) return inFence(cols.entryFirst[e]!, cols.entryLast[e]!, this.task.fence);
    this.tuples.widen(t, cols.entryFirst[e]!, cols.entryLast[e]!);
    return inFence(this.tuples.first, this.tuples.last, this.task.fence);
  }

  /** Verifies the trigram index's candidates (ascending record ids) inside [from, to); returns where to resume. */
  private scanCandidates(cand: Uint32Array): number | undefined {
    for (let k = 0; k < cand.length; k++) {
      const i = cand[k]!;
      if (i < this.from) continue;
      if (i >= this.to || this.cancelled()) return undefined;
      if (recordMatches(this.main.re, this.cols, i) && !this.onRecord(i)) {
        // Paused, or this task's share of the answer is found: the front
        // end runs the rest of the range if the merge turns out to need it.
        return (this.paused || this.matched >= this.task.want) && !this.cancelled() && i + 1 < this.to ? i + 1 : undefined;
      }
      if ((k & 1023) === 0 && this.stale()) {
        this.flush();
        if (this.paused) return i + 1;
      }
    }
    return undefined;
  }

  /**
   * Scans the blob in slices of about LIMITS.scanSliceMs, so that the cancel
   * flag is seen that often however slow the pattern makes RE2. The slice
   * size follows the measured speed: it halves (or more) when a slice ran
   * long and at most doubles when it ran short. A task that used up its turn
   * ends and its rest queues behind the tasks waiting for a worker
   * (LIMITS.scanTurnMs): pools are shared. Returns where to resume.
   */
  private scanSlices(): number | undefined {
    const shouldStop = () => this.cancelled() || this.stale();
    let at = this.from;
    let slice = sliceRecordsFirst;
    const turnEnd = performance.now() + this.task.turnMs;
    let turnOver = false;
    while (at < this.to && this.matched < this.task.want && !this.cancelled() && !this.paused && !turnOver) {
      const t0 = performance.now();
      const end = Math.min(this.to, at + slice);
      at = this.main.everyRecord ? everyRecord(at, end, this.onRecord, shouldStop)
        : scanRecords(this.main.re, this.cols, at, end, this.onRecord, shouldStop);
      const ms = performance.now() - t0;
      slice = Math.max(sliceRecordsMin, Math.min(slice * 2, Math.floor(slice * LIMITS.scanSliceMs / Math.max(ms, 0.001))));
      if (this.stale()) this.flush();
      turnOver = performance.now() >= turnEnd;
    }
    this.turnOver = turnOver && at < this.to && !this.cancelled();
    return (this.paused || turnOver || this.matched >= this.task.want) && !this.cancelled() && at < this.to ? at : undefined;
  }
}
