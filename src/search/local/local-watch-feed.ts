// Standing watches over the local shards: each snapshot the shard set
// installs (a live flush published, a compaction swapped in) is compared
// with the last one matched, and what the new shards hold that the old
// snapshot did not is matched once against every open watch (watch-hub.ts).
//
// "New" is decided per (value, rrtype) tuple without scanning history:
//   - merged shards that weigh what the shards that left weigh (the
//     manifest's weights: compaction keeps their sum) are those shards
//     merged again, and are not read at all;
//   - the other new shards go to the matcher's thread (watch-match-task.ts):
//     it skips the records whose every rrtype a shard that left holds for the
//     same value (a walk of sorted blobs), and those with no entry first seen
//     at or after the earliest `since` of the open watches, and matches the
//     rest against every watch's pattern at once (RE2.Sets); it answers the
//     records some pattern matched, with the patterns' ids;
//   - such a record's value is looked up here by exact binary search in the
//     previous snapshot's shards (flex columns are sorted blobs: findExact)
//     and in the other new shards: a tuple the previous snapshot holds is a
//     name seen again, not a new one; one that several new shards hold is
//     one tuple, its times united over them (the earliest first, the latest
//     last), offered once.
// Comparing with the previous snapshot rather than guessing what a shard
// is keeps it right whatever happened between two checks: a compaction that
// also merged a flush no check saw holds exactly that flush's new tuples
// (its weight says so, and the walk finds them); a shard quarantined and
// back again is judged like any other.
//
// A watch joins at the snapshot last matched (or, while a transition is
// being matched, at the snapshot it leads to): every later transition is
// matched for it, so it misses nothing and sees nothing twice. With
// time_first_after given, its catch-up reads that snapshot (leased for it)
// for the tuples first seen at or after `since` over all of it: the values
// its pattern matches with an entry that recent, each judged by its times
// over every shard (exact lookups, as tuple-times.ts does for fences).
//
// Turns: what runs here (the lookups and offers of matched records, and
// catch-ups) runs in slices of LIMITS.watchSliceMs with lib/turns.ts
// between them; compiling and running the RE2.Sets happens on the matcher's
// thread, so no pattern, however costly, holds the front end. With no watch
// open a transition costs one lease swap.

import type RE2 from 're2';
import { LIMITS } from '../../config/limits.js';
import { STREAM_MESSAGES } from '../../errors/catalogue.js';
import type { Log } from '../../lib/log.js';
import { workerPool, type WorkerPool } from '../../lib/threads.js';
import { nextTurn } from '../../lib/turns.js';
import { minNonZero } from '../../model/sighting.js';
import type { Effective } from '../../query/params.js';
import type { WatchQuery } from '../../query/watch-query.js';
import { blobLength, blobRecord, findExact } from '../../shard/blob.js';
import type { FlexColumns, ShardReader } from '../../shard/shard-reader.js';
import { candidates, mayMatch } from '../../shard/trigram-index.js';
import {
  CatchUpCollector, catchUpKeep, compileWatch, WatchHub, type Watch, type WatchHubStats, type WatchTuple,
} from '../watch-hub.js';
import type { WatchPlan } from '../watch-stream.js';
import { makeMatcher, recordMatches } from './blob-searcher.js';
import type { WatchMatchTask } from './watch-match-task.js';
import type { Lease, ShardSet, ShardWeight } from './shard-set.js';

type Target = Watch['target'];

const columnsOf = (s: ShardReader, target: Target): FlexColumns => (target === 'rrnames' ? s.flexNames : s.flexRdata);

/** Records a catch-up matches between two looks at the clock. */
const RECORDS_PER_CHECK = 256;
/** Matched records whose tuples are looked up between two looks at the clock (each costs a binary search per shard). */
const HITS_PER_CHECK = 32;

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).toUpperCase().padStart(2, '0'));
function hex(bytes: Uint8Array): string {
  let s = '';
  for (let i = 0; i < bytes.length; i++) s += HEX[bytes[i]!];
  return s;
}

/** Whether record `rec` has an entry first seen at or after `since`. */
function seenSince(cols: FlexColumns, rec: number, since: number): boolean {
  for (let e = cols.entryStarts[rec]!; e < cols.entryStarts[rec + 1]!; e++) if (cols.entryFirst[e]! >= since) return true;
  return false;
}

/** A value's row in each of `shards` (-1 where absent). */
function rowsOf(shards: readonly ShardReader[], target: Target, value: string, skip: number): Int32Array {
  const rows = new Int32Array(shards.length);
  for (let j = 0; j < shards.length; j++) rows[j] = j === skip ? -1 : findExact(columnsOf(shards[j]!, target), value);
  return rows;
}

/** Whether row `k` of `cols` has an entry of rrtype `t`. */
function hasType(cols: FlexColumns, k: number, t: number): boolean {
  for (let e = cols.entryStarts[k]!; e < cols.entryStarts[k + 1]!; e++) if (cols.entryType[e] === t) return true;
  return false;
}

/** What the feed has done, for the bench and the log. */
export interface LocalWatchStats extends WatchHubStats {
  /** Snapshots matched while watches were open, and the new shards and records they read. */
  transitions: number;
  shards: number;
  records: number;
  /** Tuples offered to watches (each once, however many watches took it). */
  tuples: number;
  /** The matcher thread's time (ms). */
  matchMs: number;
  /** Front-end thread time spent on matches (lookups, offers) and catch-ups (ms), and its longest slice. */
  busyMs: number;
  longestSliceMs: number;
}

export class LocalWatchFeed {
  readonly hub = new WatchHub();
  /** The snapshot last matched; watches join here. */
  private base: Lease | undefined;
  private busy = false;
  private again = false;
  /** Watches that asked to join while a transition was being matched. */
  private pending: Watch[] = [];
  private closed = false;
  private sliceStarted = 0;
  /** The longest slice since the last snapshot matched, for its log line. */
  private sliceMaxMs = 0;
  private readonly counts = { transitions: 0, shards: 0, records: 0, tuples: 0, matchMs: 0, busyMs: 0, longestSliceMs: 0 };
  /** The matcher's thread, from the first snapshot matched while a watch is open. */
  private pool: WorkerPool<'watch-match'> | undefined;
  /** What the manifest said of each shard when it was new: the weights of shards that have left since are still known. */
  private readonly weights = new WeakMap<ShardReader, ShardWeight>();
  /** The registry version each target's patterns were last sent to the matcher in. */
  private readonly sentVersion = { rrnames: -1, rdata: -1 };

  private idleWaiters: (() => void)[] = [];

  /**
   * `clock`: what slices are timed by, in ms (wall time; bench/micro/watch-match.ts
   * passes the process's CPU time, to see the thread time a slice costs
   * apart from the machine's other load).
   */
  constructor(private readonly shards: ShardSet, private readonly log: Log,
    private readonly clock: () => number = () => performance.now()) {}

  /** Resolves once no snapshot is being matched (tools and benchmarks). */
  settled(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /** A new snapshot may be installed: match what it added. */
  published(): void {
    if (this.base !== undefined) void this.run();
  }

  plan(q: WatchQuery, eff: Effective): WatchPlan {
    const compiled = compileWatch(q);
    if (compiled.error !== undefined) {
      // runWatch answers a bad pattern in-stream and opens nothing; nothing was reserved.
      return { error: compiled.error, open: () => Promise.reject(new Error(compiled.error)), cancel: () => undefined };
    }
    this.hub.reserve();
    let placed = true;
    return {
      error: undefined,
      open: (events) => {
        placed = false;
        const w = this.hub.create(q, eff.fence, eff.limit, compiled, events);
        const started = this.shards.started();
        if (started === undefined) {
          this.join(w);
          return w;
        }
        return started.then(() => {
          this.join(w);
          return w;
        });
      },
      cancel: () => {
        if (placed) this.hub.unreserve();
        placed = false;
      },
    };
  }

  /** From the snapshot last matched on (or the one being matched to), `w` is matched; its catch-up starts there. */
  private join(w: Watch): void {
    if (w.ended || this.closed) return;
    if (this.base === undefined) {
      this.base = this.shards.lease();
      for (const s of this.base.snapshot.shards) {
        const weight = this.shards.weightOf(s.name);
        if (weight !== undefined) this.weights.set(s, weight);
      }
    }
    if (this.busy) {
      this.pending.push(w);
      return;
    }
    this.attach(w);
  }

  private attach(w: Watch): void {
    if (w.ended) return;
    this.hub.add(w);
    if (w.catchingUp) {
      const lease = this.shards.retain(this.base!);
      this.catchUp(w, lease.snapshot.shards).then(() => this.shards.release(lease), (err: unknown) => {
        this.shards.release(lease);
        w.fail(STREAM_MESSAGES.INTERNAL, err);
      });
    }
  }

  private async run(): Promise<void> {
    if (this.busy) {
      this.again = true;
      return;
    }
    this.busy = true;
    try {
      do {
        this.again = false;
        await this.step();
      } while (this.again && !this.closed);
    } catch (err) {
      // A bug, or a shard that could not be read: the watches end (their clients resume), the feed goes on.
      this.log.error({ err }, 'watch matching failed; open watches ended');
      this.hub.failAll(STREAM_MESSAGES.INTERNAL, err);
    } finally {
      this.busy = false;
      this.attachPending();
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private attachPending(): void {
    const pending = this.pending;
    this.pending = [];
    for (const w of pending) this.attach(w);
  }

  /** Matches the current snapshot against the last one matched, then makes it the base. */
  private async step(): Promise<void> {
    const next = this.shards.lease();
    const base = this.base!;
    if (next.snapshot === base.snapshot) {
      this.shards.release(next);
      return;
    }
    try {
      if (this.hub.watches.size > 0) {
        const before = base.snapshot.shards;
        const held = new Set(before);
        const added = next.snapshot.shards.filter((s) => !held.has(s));
        const kept = new Set(next.snapshot.shards);
        const gone = before.filter((s) => !kept.has(s));
        for (const s of added) {
          const w = this.shards.weightOf(s.name);
          if (w !== undefined) this.weights.set(s, w);
        }
        const t0 = performance.now();
        const { busyMs, matchMs, tuples } = this.counts;
        this.sliceMaxMs = 0;
        for (const target of ['rrnames', 'rdata'] as const) await this.match(target, before, added, gone);
        this.startSlice();
        this.hub.commit();
        this.endSlice();
        this.counts.transitions++;
        this.log.debug({
          generation: next.snapshot.generation, added: added.length, gone: gone.length,
          records: added.reduce((n, s) => n + s.rrsetCount, 0),
          tuples: this.counts.tuples - tuples, matchMs: +(this.counts.matchMs - matchMs).toFixed(2),
          busyMs: +(this.counts.busyMs - busyMs).toFixed(2), sliceMaxMs: +this.sliceMaxMs.toFixed(2),
          wallMs: Math.round(performance.now() - t0), watches: this.hub.watches.size,
        }, 'watch: snapshot matched');
      }
    } catch (err) {
      this.shards.release(next);
      throw err;
    }
    this.shards.release(base);
    this.base = next;
    // Watches that asked meanwhile join at the new base, before the next transition.
    this.attachPending();
  }

  private startSlice(): void {
    this.sliceStarted = this.clock();
  }

  private endSlice(): void {
    const ms = this.clock() - this.sliceStarted;
    this.counts.busyMs += ms;
    if (ms > this.counts.longestSliceMs) this.counts.longestSliceMs = ms;
    if (ms > this.sliceMaxMs) this.sliceMaxMs = ms;
  }

  /** Gives the thread a turn once this slice has run its time. */
  private async turnIfDue(): Promise<void> {
    if (this.clock() - this.sliceStarted < LIMITS.watchSliceMs) return;
    this.endSlice();
    await nextTurn();
    this.startSlice();
  }

  /**
   * One target's new shards against every watch of that target: matched on
   * the matcher's thread (watch-match-task.ts), which answers the records
   * some pattern matched; their new tuples are found and offered here.
   */
  private async match(target: Target, before: readonly ShardReader[], added: readonly ShardReader[],
    gone: readonly ShardReader[]): Promise<void> {
    const registry = this.hub.patterns[target];
    if (registry.size === 0 || added.length === 0) return;
    const floor = this.hub.floor(target);
    const read = this.toRead(added, gone);
    const task: WatchMatchTask = {
      target, version: registry.version, floor, added: read.map((i) => added[i]!.handle()), gone: gone.map((s) => s.handle()),
    };
    if (this.sentVersion[target] !== task.version) task.patterns = registry.list();
    this.pool ??= workerPool('watch-match', {
      minThreads: 1, maxThreads: 1, concurrentTasksPerWorker: 1, idleTimeout: Infinity, maxQueue: 2,
    });
    let r = await this.pool.run(task);
    // A thread started afresh (the last one died) has no patterns yet.
    if (r.needPatterns === true) r = await this.pool.run({ ...task, patterns: registry.list() });
    if (r.needPatterns === true) throw new Error('the watch matcher thread did not take the patterns it was sent');
    this.sentVersion[target] = task.version;
    this.counts.records += r.records;
    this.counts.matchMs += r.ms;
    this.counts.shards += read.length;
    this.startSlice();
    const watches: Watch[] = [];
    for (let n = 0; n < r.shards.length; n++) {
      const hits = r.shards[n]!;
      const i = read[n]!;
      for (let k = 0; k < hits.records.length; k++) {
        if ((k & (HITS_PER_CHECK - 1)) === HITS_PER_CHECK - 1) await this.turnIfDue();
        registry.watchesOf(hits.ids, hits.starts[k]!, hits.starts[k + 1]!, watches);
        if (watches.length > 0) this.found(target, before, added, i, hits.records[k]!, watches, floor);
      }
    }
    this.endSlice();
  }

  /**
   * Which new shards need reading: all but the merged ones, when the shards
   * that left weigh exactly what the merged ones do (ShardSet.weightOf: then
   * they are those shards merged, old data every bit); else all (the matcher
   * thread still skips, record by record, what the shards that left held).
   */
  private toRead(added: readonly ShardReader[], gone: readonly ShardReader[]): number[] {
    const all = added.map((_, i) => i);
    const merged = all.filter((i) => this.weights.get(added[i]!)?.merged === true);
    if (merged.length === 0 || gone.length === 0) return all;
    let goneWeight = 0;
    for (const s of gone) {
      const w = this.weights.get(s);
      if (w === undefined) return all;
      goneWeight += w.weight;
    }
    const mergedWeight = merged.reduce((n, i) => n + this.weights.get(added[i]!)!.weight, 0);
    return mergedWeight === goneWeight ? all.filter((i) => !merged.includes(i)) : all;
  }

  /** A record of new shard `i` some watches matched: its new tuples, offered to them. */
  private found(target: Target, before: readonly ShardReader[], added: readonly ShardReader[], i: number, rec: number,
    matched: readonly Watch[], floor: number): void {
    const shard = added[i]!;
    const cols = columnsOf(shard, target);
    const record = cols.blob.subarray(cols.offsets[rec], cols.offsets[rec + 1]! - 1);
    const watches = matched.filter((w) => !w.ended && !w.excludes(record));
    if (watches.length === 0) return;
    const value = blobRecord(cols, rec);
    const old = rowsOf(before, target, value, -1);
    const others = rowsOf(added, target, value, i);
    for (let e = cols.entryStarts[rec]!; e < cols.entryStarts[rec + 1]!; e++) {
      const t = cols.entryType[e]!;
      if (cols.entryFirst[e]! < floor) continue;
      if (before.some((s, j) => old[j]! >= 0 && hasType(columnsOf(s, target), old[j]!, t))) continue;
      let first = cols.entryFirst[e]!;
      let last = cols.entryLast[e]!;
      let handled = false;
      for (let j = 0; j < added.length && !handled; j++) {
        const k = others[j]!;
        if (k < 0) continue;
        const oc = columnsOf(added[j]!, target);
        for (let f = oc.entryStarts[k]!; f < oc.entryStarts[k + 1]!; f++) {
          if (oc.entryType[f] !== t) continue;
          // An earlier new shard holds the tuple too: it was offered from there.
          if (j < i) handled = true;
          first = minNonZero(first, oc.entryFirst[f]!);
          last = Math.max(last, oc.entryLast[f]!);
        }
      }
      if (handled) continue;
      this.counts.tuples++;
      const link = cols.link[e]!;
      const tuple: WatchTuple = { value, type: t, first, last };
      if (target === 'rdata') tuple.rawHex = () => hex(shard.rdataWire(link));
      for (const w of watches) w.offer(tuple);
    }
  }

  /**
   * The tuples of `shards` (the snapshot `w` joined at) first seen at or
   * after w.since over all of them, that w's pattern matches: the earliest
   * catchUpKeep(w) of them, sorted, handed to w.caughtUp().
   */
  private async catchUp(w: Watch, shards: readonly ShardReader[]): Promise<void> {
    const since = w.since;
    const target = w.target;
    const re: RE2 = makeMatcher(w.pattern);
    const collector = new CatchUpCollector(catchUpKeep(w));
    this.startSlice();
    for (let i = 0; i < shards.length; i++) {
      const shard = shards[i]!;
      const cols = columnsOf(shard, target);
      const n = blobLength(cols);
      if (n === 0 || shard.timeMax < since || !mayMatch(cols.trigrams, w.pattern.trigrams)) continue;
      const cand = w.pattern.everyRecord ? 'scan'
        : candidates(cols.trigrams, w.pattern.trigrams, n, Math.floor(n * LIMITS.trigramCandidateFractionMax));
      const count = cand === 'scan' ? n : cand.length;
      for (let c = 0; c < count; c++) {
        if ((c & (RECORDS_PER_CHECK - 1)) === 0) {
          await this.turnIfDue();
          if (w.ended) return this.endSlice();
        }
        const rec = cand === 'scan' ? c : cand[c]!;
        if (!seenSince(cols, rec, since)) continue;
        if (!w.pattern.everyRecord && !recordMatches(re, cols, rec)) continue;
        if (w.excludes(cols.blob.subarray(cols.offsets[rec], cols.offsets[rec + 1]! - 1))) continue;
        this.catchUpValue(w, shards, i, rec, collector);
      }
    }
    this.endSlice();
    const { tuples, more } = collector.result();
    w.caughtUp(tuples, more);
  }

  /** One matching record of a catch-up: its tuples first seen at or after w.since over every shard. */
  private catchUpValue(w: Watch, shards: readonly ShardReader[], i: number, rec: number, out: CatchUpCollector): void {
    const target = w.target;
    const shard = shards[i]!;
    const cols = columnsOf(shard, target);
    const value = blobRecord(cols, rec);
    const rows = rowsOf(shards, target, value, i);
    for (let e = cols.entryStarts[rec]!; e < cols.entryStarts[rec + 1]!; e++) {
      const t = cols.entryType[e]!;
      if (cols.entryFirst[e]! < w.since) continue;
      let first = cols.entryFirst[e]!;
      let last = cols.entryLast[e]!;
      let handled = false;
      for (let j = 0; j < shards.length && !handled; j++) {
        const k = rows[j]!;
        if (k < 0) continue;
        const oc = columnsOf(shards[j]!, target);
        for (let f = oc.entryStarts[k]!; f < oc.entryStarts[k + 1]!; f++) {
          if (oc.entryType[f] !== t) continue;
          // Held by an earlier shard too: taken from there (if it is recent enough there, as it must be to count).
          if (j < i) handled = true;
          first = minNonZero(first, oc.entryFirst[f]!);
          last = Math.max(last, oc.entryLast[f]!);
        }
      }
      if (handled || !w.wants(t, first, last)) continue;
      const link = cols.link[e]!;
      const tuple: WatchTuple = { value, type: t, first, last };
      if (target === 'rdata') tuple.rawHex = () => hex(shard.rdataWire(link));
      out.add(tuple);
    }
  }

  stats(): LocalWatchStats {
    return { ...this.hub.stats(), ...this.counts };
  }

  /** Ends every open watch's matching (the server is closing: their streams end with the shutdown terminator). */
  async close(): Promise<void> {
    this.closed = true;
    for (const w of [...this.hub.watches]) w.close();
    if (this.base !== undefined && !this.busy) this.shards.release(this.base);
    await this.pool?.destroy();
  }
}
