// Standing watches over the local shards: each snapshot the shard set
// installs (a live flush published, a compaction swapped in) is compared
// with the last one matched, and what the new shards hold that the old
// snapshot did not is matched once against every open watch (watch-hub.ts).
//
// "New" is decided per (value, rrtype) tuple without scanning history:
//   - only the shards that are not in the previous snapshot are read, and of
//     them only values with an entry first seen at or after the earliest
//     `since` of the open watches (one look at a typed array per value), so
//     a compaction's output, old data merged again, costs little;
//   - those go through the pattern index (one RE2.Set pass over a range of
//     the blob for every watch at once);
//   - a value some watch matched is looked up by exact binary search in the
//     previous snapshot's shards (flex columns are sorted blobs: findExact)
//     and in the other new shards: a tuple the previous snapshot holds is a
//     name seen again, not a new one; one that several new shards hold is
//     one tuple, its times united over them (the earliest first, the latest
//     last), offered once.
// Comparing with the previous snapshot rather than guessing what a shard
// is keeps it right whatever happened between two checks: a compaction that
// merged old shards holds nothing new; one that also merged a flush no
// check saw holds exactly that flush's new tuples; a shard quarantined and
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
// Turns: matching and catch-ups run on the front-end thread in slices of
// LIMITS.watchSliceMs (lib/turns.ts between them), compiling at most one
// RE2.Set per slice; a transition is matched once whatever the number of
// watches. With no watch open a transition costs one lease swap.

import type RE2 from 're2';
import { LIMITS } from '../../config/limits.js';
import { STREAM_MESSAGES } from '../../errors/catalogue.js';
import type { Log } from '../../lib/log.js';
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
import type { Lease, ShardSet } from './shard-set.js';

type Target = Watch['target'];

const columnsOf = (s: ShardReader, target: Target): FlexColumns => (target === 'rrnames' ? s.flexNames : s.flexRdata);

/** Records matched between two looks at the clock. */
const RECORDS_PER_CHECK = 256;

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
  /** Front-end thread time spent matching and catching up (ms), and its longest slice. */
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
  private readonly counts = { transitions: 0, shards: 0, records: 0, tuples: 0, busyMs: 0, longestSliceMs: 0 };

  constructor(private readonly shards: ShardSet, private readonly log: Log) {}

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
    this.base ??= this.shards.lease();
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
        this.startSlice();
        const t0 = performance.now();
        const busy0 = this.counts.busyMs;
        const tuples0 = this.counts.tuples;
        for (const target of ['rrnames', 'rdata'] as const) await this.match(target, before, added);
        this.hub.commit();
        this.endSlice();
        this.counts.transitions++;
        this.log.debug({ generation: next.snapshot.generation, added: added.length, records: added.reduce((n, s) => n + s.rrsetCount, 0),
          tuples: this.counts.tuples - tuples0, busyMs: +(this.counts.busyMs - busy0).toFixed(2),
          wallMs: Math.round(performance.now() - t0), watches: this.hub.watches.size }, 'watch: snapshot matched');
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
    this.sliceStarted = performance.now();
  }

  private endSlice(): void {
    const ms = performance.now() - this.sliceStarted;
    this.counts.busyMs += ms;
    if (ms > this.counts.longestSliceMs) this.counts.longestSliceMs = ms;
  }

  /** Gives the thread a turn once this slice has run its time. */
  private async turnIfDue(): Promise<void> {
    if (performance.now() - this.sliceStarted < LIMITS.watchSliceMs) return;
    this.endSlice();
    await nextTurn();
    this.startSlice();
  }

  /** One target's new shards against every watch of that target. */
  private async match(target: Target, before: readonly ShardReader[], added: readonly ShardReader[]): Promise<void> {
    const index = this.hub.patterns[target];
    if (index.empty || added.length === 0) return;
    while (!index.prepare()) await this.turnIfDue();
    const floor = this.hub.floor(target);
    for (let i = 0; i < added.length; i++) {
      const shard = added[i]!;
      const cols = columnsOf(shard, target);
      const n = blobLength(cols);
      // timeMax is the latest time the shard holds: no entry of it is first seen later.
      if (n === 0 || shard.timeMax < floor) continue;
      this.counts.shards++;
      for (let a = 0; a < n; a += RECORDS_PER_CHECK) {
        await this.turnIfDue();
        if (index.empty) return;
        const b = Math.min(n, a + RECORDS_PER_CHECK);
        this.counts.records += b - a;
        index.match(cols, a, b, (rec) => seenSince(cols, rec, floor),
          (rec, watches) => this.found(target, before, added, i, rec, watches, floor));
      }
    }
  }

  /** A record of new shard `i` some watches matched: its new tuples, offered to them. */
  private found(target: Target, before: readonly ShardReader[], added: readonly ShardReader[], i: number, rec: number,
    matched: readonly Watch[], floor: number): void {
    const shard = added[i]!;
    const cols = columnsOf(shard, target);
    const record = cols.blob.subarray(cols.offsets[rec]!, cols.offsets[rec + 1]! - 1);
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
        if (w.excludes(cols.blob.subarray(cols.offsets[rec]!, cols.offsets[rec + 1]! - 1))) continue;
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
  close(): void {
    this.closed = true;
    for (const w of [...this.hub.watches]) w.close();
    if (this.base !== undefined && !this.busy) this.shards.release(this.base);
  }
}
