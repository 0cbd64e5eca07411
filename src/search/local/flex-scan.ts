// One flexible-search scan task, as a scan worker runs it (workers/scan.ts):
// every shard the search scans, over one range of values [from, to),
// streaming the unique matches back in value order over the task's
// MessagePort.
//
// Why one task over many shards: a task per shard cost the front end a
// dispatch, a message channel and a merge input per shard (about 180 us a
// shard at 25 shards), so a search's fixed cost grew with the data's shard
// count. Here a task holds one cursor per shard and merges them itself: a
// shard costs a cache lookup, two binary searches for its range and, for a
// pattern the trigram index can narrow, its candidate list. Values several
// shards hold are one result whose rrtypes are the union of theirs, judged
// by a time fence on their times over every shard.
//
// Roles (ripgrep's split): the matcher is the compiled RE2 (src/query), the
// searcher drives each shard's blob through it (blob-searcher.ts findNext, or
// the trigram index's candidates: a Cursor), and this class is the sink: it
// merges the cursors, filters each value by exclude, rrtype and time fence,
// batches the survivors, waits for credits (scan-protocol.ts), and stops
// once it has `want` of them, its turn is over, or the task is cancelled.

import { BroadcastChannel } from 'node:worker_threads';
import type RE2 from 're2';
import { LIMITS } from '../../config/limits.js';
import { failIf, fault } from '../../lib/faults.js';
import { lowerBound } from '../../lib/lower-bound.js';
import { inFence, isFenced, keepType } from '../../model/filters.js';
import { minNonZero } from '../../model/sighting.js';
import { compilePattern } from '../../query/pattern.js';
import { blobLength, blobLowerBound, blobRecord } from '../../shard/blob.js';
import { ShardReader, type FlexColumns, type ShardHandle } from '../../shard/shard-reader.js';
import { candidates } from '../../shard/trigram-index.js';
import { findNext, makeMatcher, recordMatches } from './blob-searcher.js';
import { BatchBuilder, batchTransfer } from '../flex-batch.js';
import {
  CONTROL_CANCEL, CONTROL_CREDITS, RETIRED_SHARDS_CHANNEL, type FlexTask, type TaskTime, type WorkerMessage,
} from './scan-protocol.js';
import { TupleTimes } from './tuple-times.js';

/**
 * Bytes of blob a cursor searches per step before the task checks its turn
 * and the cancel flag: at first, and at most and least. A step's size
 * follows the measured speed toward LIMITS.scanSliceMs (cut in proportion
 * when a step ran long, doubled when one ran short), since a pattern can
 * make RE2 crawl.
 */
const STEP_BYTES_FIRST = 64 << 10;
const STEP_BYTES_MAX = 1 << 20;
const STEP_BYTES_MIN = 256;
/** Values merged between two checks of the clock (turn, staleness) when nothing else checks it. */
const VALUES_PER_CHECK = 256;

interface Compiled {
  re: RE2;
  trigrams: ReturnType<typeof compilePattern>['trigrams'];
  everyRecord: boolean;
}

/**
 * What a worker keeps between tasks: attached shards (attaching copies
 * nothing and checks nothing, but reuse saves the FlatBuffer table walk),
 * compiled patterns, and where values start in a shard's column (bound()),
 * each bounded in LIMITS and evicted oldest first. A shard the front end has
 * released is dropped at once (RETIRED_SHARDS_CHANNEL carries its identity);
 * its bounds are dropped with the oldest, as no task asks for them again.
 */
export class WorkerCache {
  private readonly shards = new Map<string, ShardReader>();
  private readonly patterns = new Map<string, Compiled>();
  private readonly bounds = new Map<string, number>();
  private readonly retired = new BroadcastChannel(RETIRED_SHARDS_CHANNEL);

  constructor() {
    this.retired.onmessage = (m) => this.shards.delete((m as { data: string }).data);
    this.retired.unref();
  }

  /**
   * The first record of `cols` (a column of `shard`) at or after `value`. A
   * full scan's value ranges are cut at the same values until the shards
   * change, and a binary search over a large shard reads a page at random
   * per step (at 100 M RRsets in 15 shards, 0.25 ms of a 10,000-row
   * match-all answer's 6.5: bench/scale.ts's class, alternated runs).
   */
  bound(shard: ShardReader, cols: FlexColumns, value: string): number {
    // Every record is at or after '' (a scan's first range).
    if (value === '') return 0;
    const key = `${shard.identity}\u0000${cols === shard.flexNames ? 'n' : 'r'}\u0000${value}`;
    let at = this.bounds.get(key);
    if (at === undefined) {
      at = blobLowerBound(cols, value);
      if (this.bounds.size >= LIMITS.workerBoundsCachedMax) this.bounds.delete(this.bounds.keys().next().value!);
      this.bounds.set(key, at);
    }
    return at;
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

const EMPTY = new Uint32Array(0);

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));
function hex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!];
  return s;
}

/** One scanned shard's matching records in [from, to), in order, found as they are needed. */
class Cursor {
  /** The current match (a record index), or -1 while there is none (not found yet, or none left). */
  head = -1;
  /** No match is left. */
  exhausted = false;
  /** Scans: the next record to search. Candidates: the next candidate to test. */
  private at: number;
  private stepBytes = STEP_BYTES_FIRST;
  /** nextValue()'s cache: the record it last read, and its value. */
  private nextAt = -1;
  private nextKey = '';
  /** key's cache: the record it last read, and its value. */
  private keyAt = -1;
  private keyText = '';

  /** Every record of the range matches (a scan by a pattern that matches anything): advance() never searches. */
  readonly dense: boolean;

  constructor(readonly shard: ShardReader, readonly cols: FlexColumns, from: number, private readonly to: number,
    private readonly main: Compiled, private readonly cand: Uint32Array | 'scan') {
    this.at = cand === 'scan' ? from : lowerBound(cand, from);
    this.dense = cand === 'scan' && main.everyRecord;
  }

  /**
   * Moves to the next match: true once there (or exhausted); false when it
   * searched a step's bytes (or VALUES_PER_CHECK candidates) without one and
   * the task should look at the clock before asking again.
   */
  advance(): boolean {
    const { cols, to, main, cand } = this;
    this.head = -1;
    if (cand !== 'scan') {
      for (let n = 0; this.at < cand.length && cand[this.at]! < to; n++) {
        if (n >= VALUES_PER_CHECK) return false;
        const i = cand[this.at++]!;
        if (recordMatches(main.re, cols, i)) return this.found(i);
      }
      return this.done();
    }
    if (this.at >= to) return this.done();
    if (main.everyRecord) return this.found(this.at++);
    const t0 = performance.now();
    const r = findNext(main.re, cols, this.at, to, this.stepBytes);
    const ms = performance.now() - t0;
    if (ms > LIMITS.scanSliceMs) this.stepBytes = Math.max(STEP_BYTES_MIN, Math.floor((this.stepBytes * LIMITS.scanSliceMs) / ms));
    else if (r < 0 && ms < LIMITS.scanSliceMs / 4) this.stepBytes = Math.min(STEP_BYTES_MAX, this.stepBytes << 1);
    if (r >= 0) {
      this.at = r + 1;
      return this.found(r);
    }
    this.at = -r - 1;
    return this.at >= to ? this.done() : false;
  }

  /**
   * The smallest value this cursor has not finished with: its match (or, if
   * that value was taken already, just above it), else the next record it
   * would look at; undefined when exhausted. Records are printable ASCII, so
   * value + NUL sorts right after value and before anything else.
   */
  frontier(taken: string | undefined): string | undefined {
    if (this.exhausted) return undefined;
    if (this.head >= 0) return this.key === taken ? `${taken}\u0000` : this.key;
    return this.nextValue();
  }

  /**
   * Where the merge stands with this cursor: its match's value, or, while
   * it searches, the value of the next record it would look at (no match
   * below it is left here); undefined when exhausted.
   */
  position(): string | undefined {
    if (this.exhausted) return undefined;
    // A cursor with nothing left to look at stands lowest: the next advance() finds it exhausted.
    return this.head >= 0 ? this.key : this.nextValue() ?? '';
  }

  /**
   * The current match's value, made when first asked: a search over one
   * shard (or the last cursor left) never compares values, and renders the
   * match from its bytes.
   */
  get key(): string {
    if (this.keyAt !== this.head) {
      this.keyAt = this.head;
      // A dense match is the record the merge just read as this cursor's position: its value is made once.
      this.keyText = this.head === this.nextAt ? this.nextKey : blobRecord(this.cols, this.head);
    }
    return this.keyText;
  }

  /** The match has been taken: the next advance() searches on from the record after it. */
  consume(): void {
    this.head = -1;
  }

  /** The value of the next record to look at (cached: a searching cursor is asked once per merge step). */
  private nextValue(): string | undefined {
    const next = this.cand === 'scan' ? this.at : this.at < this.cand.length ? this.cand[this.at]! : this.to;
    if (next >= this.to) return undefined;
    if (next !== this.nextAt) {
      this.nextAt = next;
      this.nextKey = blobRecord(this.cols, next);
    }
    return this.nextKey;
  }

  private found(i: number): true {
    this.head = i;
    return true;
  }

  private done(): true {
    this.exhausted = true;
    return true;
  }
}

/**
 * Puts c into `order` (cursors by position, a searching one before a matched
 * one on a tie: it may yet find that same value). A cursor with nothing left
 * to look at stands lowest, so the next step finds it exhausted.
 */
function placeCursor(order: Cursor[], c: Cursor): void {
  if (order.length === 0) {
    order.push(c);
    return;
  }
  const at = c.position()!;
  const searching = c.head < 0;
  let lo = 0;
  let hi = order.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const o = order[mid]!;
    const oAt = o.position()!;
    if (oAt < at || (oAt === at && (o.head < 0 || !searching))) lo = mid + 1;
    else hi = mid;
  }
  order.splice(lo, 0, c);
}

/** The (rrtype, times, link) entries of one value over the cursors that hold it, united by rrtype. */
interface ValueEntry {
  type: number;
  first: number;
  last: number;
  /** The shard and link (flex rdata: its Rdata row) of the first holder, for raw_rdata. */
  shard: ShardReader;
  link: number;
}

export class FlexScan {
  private readonly control: Int32Array;
  private readonly cursors: Cursor[];
  private readonly main: Compiled;
  private readonly exclude: RE2 | undefined;
  /** The unscanned candidate shards' times of each tuple, when a fence needs them. */
  private readonly tuples: TupleTimes | undefined;
  private readonly batch = new BatchBuilder();
  private readonly entries: ValueEntry[] = [];
  private matched = 0;
  /** The last value taken (sent, or filtered out): record takenRecord of takenCols, its text made only by resumeFrom(). */
  private takenCols: FlexColumns | undefined;
  private takenRecord = -1;
  /** merge()'s holders of a value only one cursor holds, reused. */
  private readonly solo: Cursor[] = [];
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
  private readonly turnEnd: number;

  constructor(private readonly task: FlexTask, cache: WorkerCache) {
    this.control = new Int32Array(task.control);
    this.main = cache.pattern(task.method, task.pattern);
    this.exclude = task.exclude !== undefined ? cache.pattern(task.method, task.exclude).re : undefined;
    this.turnEnd = this.started + task.turnMs;
    this.cursors = task.shards.map((h) => {
      const shard = cache.shard(h);
      const cols = this.columnsOf(shard);
      const records = blobLength(cols);
      const from = cache.bound(shard, cols, task.from);
      const to = task.to === undefined ? records : cache.bound(shard, cols, task.to);
      const cand = from >= to ? EMPTY : candidates(cols.trigrams, this.main.trigrams, records,
        Math.floor(records * LIMITS.trigramCandidateFractionMax));
      return new Cursor(shard, cols, from, to, this.main, cand);
    });
    this.tuples = isFenced(task.fence) && task.others.length > 0
      ? new TupleTimes(task.others.map((h) => this.columnsOf(cache.shard(h)))) : undefined;
  }

  private columnsOf(s: ShardReader): FlexColumns {
    return this.task.target === 'rrnames' ? s.flexNames : s.flexRdata;
  }

  /** Runs the task to its `end` (or `error`) message; the port is closed afterwards. */
  run(): void {
    try {
      this.merge();
      this.flush();
      const resumeFrom = this.cancelled() ? undefined : this.resumeFrom();
      this.post({ type: 'end', cancelled: this.cancelled(), ...(resumeFrom !== undefined ? { resumeFrom } : {}), time: this.time() });
    } catch (err) {
      const e = err as { code?: string; message?: string };
      this.post({ type: 'error', code: e.code ?? 'INTERNAL', message: e.message ?? String(err), time: this.time() });
    } finally {
      this.task.port.close();
    }
  }

  /**
   * Where the rest of the range starts, when the task stopped before its
   * end (paused for credits, its turn over, its `want` found): the smallest
   * value some cursor has not finished with. Every value below it has been
   * sent or filtered out, so the next task starts there and sends nothing twice.
   */
  private resumeFrom(): string | undefined {
    const taken = this.takenCols === undefined ? undefined : blobRecord(this.takenCols, this.takenRecord);
    let min: string | undefined;
    for (const c of this.cursors) {
      const f = c.frontier(taken);
      if (f !== undefined && (min === undefined || f < min)) min = f;
    }
    return min;
  }

  /**
   * Merges the cursors' matches in value order until done, `want` values, a
   * pause, the turn's end or a cancel. The cursors move in step: each turn of
   * the loop moves the one that stands lowest (position()), so a cursor
   * never searches far past what the others have covered. Were each cursor
   * searched to its next match in turn, a pattern that matches rarely would
   * have the first cursor search its whole range while the others had not
   * started; the turn would end with the resume point barely past the start
   * and the next task would search it all again (at 100 M RRsets in 15
   * shards, a match-nothing scan took 94 s instead of about 1: bench/scale.ts).
   */
  private merge(): void {
    // The live cursors in merge order, kept sorted as they move: a value costs a binary search for each cursor that
    // moved, not a comparison with every cursor (a CPU profile of match-all limit=10000 over 100 M RRsets in 15
    // shards, the class bench/scale.ts times, had a third of the worker's time in those comparisons). A lone cursor
    // is the lowest without comparing values.
    const order: Cursor[] = [];
    for (const c of this.cursors) if (!c.exhausted) placeCursor(order, c);
    for (let n = 1; order.length > 0; n++) {
      if (this.matched >= this.task.want || this.paused || this.cancelled()) return;
      if ((n & (VALUES_PER_CHECK - 1)) === 0 && this.mustStop()) return;
      const low = order[0]!;
      if (low.head < 0) {
        const found = low.advance();
        order.shift();
        if (!low.exhausted) placeCursor(order, low);
        if (!found && this.mustStop()) return;
        continue;
      }
      // Every cursor holding the same value stands next to low (a searching one at that value would stand before it).
      let count = 1;
      if (order.length > 1) {
        const at = low.key;
        while (count < order.length && order[count]!.head >= 0 && order[count]!.key === at) count++;
      }
      let holders = this.solo;
      if (count === 1) holders[0] = low;
      else holders = order.slice(0, count);
      this.take(holders);
      order.splice(0, count);
      for (const c of holders) {
        c.consume();
        // A cursor whose every record matches finds its next match at once: found now, it is placed once a value,
        // not once searching and again matched (match-all limit=10000 over 100 M RRsets in 15 shards: bench/scale.ts).
        if (c.dense) c.advance();
        if (!c.exhausted) placeCursor(order, c);
      }
    }
  }

  /**
   * Whether the task must stop now: cancelled, paused, or its turn over
   * (scan-protocol.ts) once it has got somewhere (its resume point is past
   * where it started, so a task too short for one step still advances).
   * Also sends a batch that has waited too long.
   */
  private mustStop(): boolean {
    if (this.cancelled() || this.paused) return true;
    const now = performance.now();
    if (this.batch.values > 0 && now - this.lastFlush > LIMITS.scanFlushStaleMs) this.flush();
    if (this.paused) return true;
    if (now < this.turnEnd) return false;
    const from = this.resumeFrom();
    if (from !== undefined && from <= this.task.from) return false;
    this.turnOver = true;
    return true;
  }

  /** One value: the holders' entries united by rrtype, filtered, rendered; counted when a line survives. */
  private take(holders: readonly Cursor[]): void {
    const first = holders[0]!;
    this.takenCols = first.cols;
    this.takenRecord = first.head;
    if (this.exclude && recordMatches(this.exclude, first.cols, first.head)) return;
    if (holders.length === 1 && this.tuples === undefined) {
      this.takeOne(first);
      return;
    }
    const entries = this.entriesOf(holders);
    this.tuples?.seek(first.key);
    this.batch.beginValue(first.key);
    for (const e of entries) {
      if (!keepType(this.task.typeFilter, e.type) || !this.inFence(e)) continue;
      if (this.task.target === 'rrnames') this.batch.nameLine(e.type);
      else this.batch.rdataLine(e.type, hex(e.shard.rdataWire(e.link)));
    }
    this.endValue();
  }

  /**
   * take() for a value only one cursor holds and no other shard's times
   * judge: its entries straight from the columns (one per rrtype, ascending
   * already), its text as the record's bytes.
   */
  private takeOne(c: Cursor): void {
    const { cols, head } = c;
    const { typeFilter, fence } = this.task;
    const names = this.task.target === 'rrnames';
    this.batch.beginRecord(cols.blob, cols.offsets[head]!, cols.offsets[head + 1]! - 1);
    for (let e = cols.entryStarts[head]!; e < cols.entryStarts[head + 1]!; e++) {
      const type = cols.entryType[e]!;
      if (!keepType(typeFilter, type) || !inFence(cols.entryFirst[e]!, cols.entryLast[e]!, fence)) continue;
      if (names) this.batch.nameLine(type);
      else this.batch.rdataLine(type, hex(c.shard.rdataWire(cols.link[e]!)));
    }
    this.endValue();
  }

  /** Counts the value when a line survived, and sends the batch once it is full. */
  private endValue(): void {
    if (!this.batch.endValue()) return;
    this.matched++;
    if (this.batch.values >= LIMITS.batchItemsMax || this.batch.bytes >= LIMITS.writeChunkBytes) this.flush();
  }

  /** The holders' entries, one per rrtype (ascending), times united over them (earliest first, latest last). */
  private entriesOf(holders: readonly Cursor[]): ValueEntry[] {
    const out = this.entries;
    out.length = 0;
    for (const c of holders) {
      const cols = c.cols;
      for (let e = cols.entryStarts[c.head]!; e < cols.entryStarts[c.head + 1]!; e++) {
        const type = cols.entryType[e]!;
        const first = cols.entryFirst[e]!;
        const last = cols.entryLast[e]!;
        const same = out.find((x) => x.type === type);
        if (same === undefined) out.push({ type, first, last, shard: c.shard, link: cols.link[e]! });
        else {
          same.first = minNonZero(same.first, first);
          same.last = Math.max(same.last, last);
        }
      }
    }
    if (holders.length > 1) out.sort((a, b) => a.type - b.type);
    return out;
  }

  /** The fence on a tuple, with its times over the unscanned candidate shards too when a fence needs them. */
  private inFence(e: ValueEntry): boolean {
    if (this.tuples === undefined) return inFence(e.first, e.last, this.task.fence);
    this.tuples.widen(e.type, e.first, e.last);
    return inFence(this.tuples.first, this.tuples.last, this.task.fence);
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
    const batch = this.batch.take();
    this.task.port.postMessage({ type: 'batch', batch } satisfies WorkerMessage, batchTransfer(batch));
    this.lastFlush = performance.now();
  }
}
