// Standing watches, tier-neutral: the open watches of one server process,
// what each has been sent and holds for its reader, and the registry of
// their distinct patterns per target (PatternRegistry), which a matcher
// (watch-patterns.ts IdPatterns: every pattern at once, by id) runs over each
// batch of new data. A data tier's feed (local/local-watch-feed.ts,
// clickhouse/clickhouse-watch-feed.ts) finds the tuples that are new and the
// watches whose patterns match them, and offers them; the hub does the rest
// the same way for both tiers.
//
// Contract with a feed, per batch of new data (a published shard, a poll):
//   w.offer(tuple) for every new (value, rrtype) tuple whose value w's
//   pattern matched, with its times over all data, then commit(). A watch keeps a
//   tuple when its rrtype filter, exclude (asked by the feed once per value:
//   excludes()), `since` and the key's fence allow it; commit() sorts each
//   watch's tuples by time_first (then value, then rrtype) and queues their
//   lines. So within a batch a watch's objects come in time_first order,
//   and a reader cut off anywhere loses nothing that a resume from the last
//   time_first it read does not bring back (README "Standing watches").
// Catch-up (time_first_after given): the feed gathers the tuples of the data
// published before the watch joined (catchUpCollector: the earliest
// min(limit, LIMITS.watchCatchUpTuplesMax), sorted) and hands them to
// caughtUp(); tuples offered meanwhile wait, and go after them, less those
// the catch-up already sent.
//
// Bounds: LIMITS.watchesMax watches (reserve(): 503 OVERLOADED past it), and
// LIMITS.watchQueueBytesMax of lines queued per watch for a reader that does
// not keep up; past it the watch fails (STREAM_MESSAGES.WATCH_BEHIND).

import RE2 from 're2';
import { LIMITS } from '../config/limits.js';
import { ApiError, hasCode, STREAM_MESSAGES } from '../errors/catalogue.js';
import { inFence, keepType, type TimeFence } from '../model/filters.js';
import type { FlexTarget } from '../query/flex-query.js';
import { compilePattern, type CompiledPattern } from '../query/pattern.js';
import type { WatchQuery } from '../query/watch-query.js';
import { jsonString } from '../render/json-text.js';
import { watchNameLine, watchRdataLine } from '../render/result-lines.js';
import { newStamp, type PatternEntry, type PatternSubscriber } from './watch-patterns.js';

/** One (value, rrtype) tuple as a feed found it: new to all data, with its times over all data. */
export interface WatchTuple {
  value: string;
  type: number;
  /** First and last seen (sensor or zone-file, whichever is earlier / later), epoch seconds. */
  first: number;
  last: number;
  /** rdata only: the wire form in upper-case hex (raw_rdata), computed only for a tuple some watch keeps. */
  rawHex?: () => string;
}

/** A tuple a watch keeps, with its line. */
interface Kept {
  first: number;
  value: string;
  type: number;
  line: string;
}

/** The order a watch sends tuples in: time_first, then value, then rrtype. */
type Ordered = Pick<WatchTuple, 'first' | 'value' | 'type'>;
const byTime = (a: Ordered, b: Ordered): number =>
  a.first - b.first || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0) || a.type - b.type;

const keyOf = (value: string, type: number): string => `${type}\u0000${value}`;

/** What a watch tells the stream that reads it (watch-stream.ts). */
export interface WatchEvents {
  /** Lines are queued (take() has some). */
  ready(): void;
  /** The watch cannot go on; the stream ends `failed` with `message` (`error`, for the log, when the server is at fault). */
  fail(message: string, error?: unknown): void;
}

/** The reader's side of a watch. */
export interface WatchHandle {
  /** Up to `max` queued objects' lines, as one string, and how many; moves past them. */
  take(max: number): { text: string; count: number };
  /** Once take() has nothing left: the `failed` message the stream ends with after what was queued, if any. */
  readonly endsWith: string | undefined;
  /** Stops the watch and frees what it holds (idempotent). */
  close(): void;
}

export class Watch implements PatternSubscriber, WatchHandle {
  stamp = 0;
  readonly target: FlexTarget;
  readonly since: number;
  /** True until caughtUp(): tuples offered meanwhile wait in `held`. */
  catchingUp: boolean;
  ended = false;
  private readonly queue: string[] = [];
  private queuedBytes = 0;
  private kept: Kept[] = [];
  private held: Kept[] = [];
  private heldBytes = 0;
  /** Bytes of the catch-up, queued at once: the bound on a reader falling behind counts from after them. */
  private allowance = 0;
  /** Set when the watch ends after what it has queued (endsWith). */
  private after: string | undefined;

  constructor(private readonly hub: WatchHub, readonly q: WatchQuery, readonly fence: TimeFence, readonly limit: number,
    readonly pattern: CompiledPattern, readonly exclude: RE2 | undefined, private readonly events: WatchEvents) {
    this.target = q.target;
    this.since = q.since;
    this.catchingUp = q.catchUp;
  }

  /** Whether `exclude` matches a value's record (its bytes, without the newline): the feed asks once per value. */
  excludes(record: Buffer): boolean {
    return this.exclude !== undefined && this.exclude.test(record);
  }

  /** Whether this watch keeps a tuple (rrtype, since, the key's fence): the feed may ask before it computes one. */
  wants(type: number, first: number, last: number): boolean {
    return keepType(this.q.typeFilter, type) && first >= this.since && inFence(first, last, this.fence);
  }

  /** Keeps `t` for the next commit when wanted (see wants). */
  offer(t: WatchTuple): void {
    if (this.ended || !this.wants(t.type, t.first, t.last)) return;
    const line = this.line(t);
    if (line !== undefined) this.kept.push({ first: t.first, value: t.value, type: t.type, line });
  }

  private line(t: WatchTuple): string | undefined {
    const json = jsonString(t.value);
    if (this.target === 'rrnames') return watchNameLine(json, t.type, t.first);
    const line = watchRdataLine(json, t.type, t.rawHex!(), t.first);
    // compat.md: keep lines well under 64 KiB; a longer rdata is left out, as flexible search does.
    return line.length - 1 > LIMITS.lineBytesMax ? undefined : line;
  }

  /** The batch's tuples, sorted, to the reader (or held while catching up). */
  commit(): void {
    if (this.kept.length === 0) return;
    const kept = this.kept.sort(byTime);
    this.kept = [];
    if (this.catchingUp) {
      for (const k of kept) {
        this.held.push(k);
        this.heldBytes += k.line.length;
      }
      this.bound(this.heldBytes);
      return;
    }
    this.push(kept, true);
  }

  /**
   * The catch-up's tuples (sorted by time), then those held meanwhile that
   * it did not have. `more`: it found more than it kept (catchUpKeep). When
   * it kept `limit`, the reader's limit ends the stream after them anyway;
   * when LIMITS.watchCatchUpTuplesMax cut it shorter, the watch ends after
   * them (the client resumes from the last it read).
   */
  caughtUp(tuples: readonly WatchTuple[], more: boolean): void {
    if (this.ended) return;
    const tooMany = more && catchUpKeep(this) < this.limit;
    this.catchingUp = false;
    const sent = new Set<string>();
    const lines: Kept[] = [];
    for (const t of tuples) {
      if (!this.wants(t.type, t.first, t.last)) continue;
      const line = this.line(t);
      if (line === undefined) continue;
      sent.add(keyOf(t.value, t.type));
      lines.push({ first: t.first, value: t.value, type: t.type, line });
    }
    // Bounded by LIMITS.watchCatchUpTuplesMax rather than by the queue's bound, which is for readers that fall behind.
    this.push(lines, false);
    const held = this.held.filter((k) => !sent.has(keyOf(k.value, k.type)));
    this.held = [];
    this.heldBytes = 0;
    if (tooMany) {
      // What was sent is the earliest part: the reader takes it, then the terminator says to resume.
      this.after = STREAM_MESSAGES.WATCH_CATCH_UP_TOO_LARGE;
      this.close();
      this.events.ready();
      return;
    }
    this.push(held, false);
  }

  get endsWith(): string | undefined {
    return this.after;
  }

  /** Queues lines for the reader; `bounded`: fails the watch when its reader is too far behind. */
  private push(kept: readonly Kept[], bounded: boolean): void {
    if (kept.length === 0 || this.ended) return;
    const before = this.queuedBytes;
    for (const k of kept) {
      this.queue.push(k.line);
      this.queuedBytes += k.line.length;
    }
    if (!bounded) this.allowance += this.queuedBytes - before;
    if (!bounded || this.bound(this.queuedBytes)) this.events.ready();
  }

  /** False (and the watch failed) once `bytes` is past what a watch may hold for its reader. */
  private bound(bytes: number): boolean {
    if (bytes <= LIMITS.watchQueueBytesMax + this.allowance) return true;
    this.fail(STREAM_MESSAGES.WATCH_BEHIND);
    return false;
  }

  take(max: number): { text: string; count: number } {
    const count = Math.min(max, this.queue.length);
    if (count === 0) return { text: '', count: 0 };
    const taken = this.queue.splice(0, count);
    const text = taken.join('');
    this.queuedBytes -= text.length;
    return { text, count };
  }

  /** Ends the watch at once (what is queued is dropped) with a `failed` terminator carrying `message`. */
  fail(message: string, error?: unknown): void {
    if (this.ended) return;
    this.close();
    this.queue.length = 0;
    this.queuedBytes = 0;
    this.events.fail(message, error);
  }

  /** Stops matching and frees the watch's place; lines already queued stay for take() (see endsWith). */
  close(): void {
    if (this.ended) return;
    this.ended = true;
    this.kept = [];
    this.held = [];
    this.hub.remove(this);
  }
}

/**
 * The earliest tuples of a catch-up, by time_first: keeps at most `keep`
 * (sorting and cutting whenever twice that has gathered) and counts all.
 */
export class CatchUpCollector {
  private tuples: WatchTuple[] = [];
  private seen = 0;

  constructor(private readonly keep: number) {}

  add(t: WatchTuple): void {
    this.seen++;
    this.tuples.push(t);
    if (this.tuples.length >= this.keep * 2) this.cut();
  }

  private cut(): void {
    this.tuples.sort(byTime);
    this.tuples.length = Math.min(this.tuples.length, this.keep);
  }

  /** The kept tuples in time order, and whether more were found than kept. */
  result(): { tuples: WatchTuple[]; more: boolean } {
    this.cut();
    return { tuples: this.tuples, more: this.seen > this.keep };
  }
}

/** A watch's pattern and exclude, compiled once (the blob forms of query/pattern.ts), or RE2's words on why not. */
export type WatchPatterns = { error: undefined; pattern: CompiledPattern; exclude: RE2 | undefined } | { error: string };

export function compileWatch(q: WatchQuery): WatchPatterns {
  try {
    const pattern = compilePattern(q.method, q.pattern);
    const exclude = q.exclude !== undefined ? new RE2(compilePattern(q.method, q.exclude).blobSource) : undefined;
    return { error: undefined, pattern, exclude };
  } catch (err) {
    return { error: hasCode(err, 'BAD_PATTERN') ? (err as Error).message : STREAM_MESSAGES.INTERNAL };
  }
}

/** The earliest `keep` of a watch's catch-up: its limit, within LIMITS.watchCatchUpTuplesMax. */
export function catchUpKeep(w: Watch): number {
  return Math.min(w.limit, LIMITS.watchCatchUpTuplesMax);
}

/** A distinct pattern of one target and the watches that hold it open. */
interface Registered extends PatternEntry {
  readonly watches: Set<Watch>;
}

/**
 * The distinct patterns of one target's open watches, each with an id that
 * a matcher (watch-patterns.ts IdPatterns, on whatever thread) reports its
 * matches by. `version` moves whenever a pattern comes or goes, so that a
 * matcher knows when to take the list again.
 */
export class PatternRegistry {
  private readonly bySource = new Map<string, Registered>();
  private readonly byId = new Map<number, Registered>();
  private nextId = 0;
  version = 0;

  get size(): number {
    return this.byId.size;
  }

  add(w: Watch): void {
    let r = this.bySource.get(w.pattern.blobSource);
    if (r === undefined) {
      r = { id: this.nextId++, source: w.pattern.blobSource, everyRecord: w.pattern.everyRecord, watches: new Set() };
      this.bySource.set(r.source, r);
      this.byId.set(r.id, r);
      this.version++;
    }
    r.watches.add(w);
  }

  remove(w: Watch): void {
    const r = this.bySource.get(w.pattern.blobSource);
    if (r === undefined || !r.watches.delete(w) || r.watches.size > 0) return;
    this.bySource.delete(r.source);
    this.byId.delete(r.id);
    this.version++;
  }

  /** The patterns, for a matcher. */
  list(): PatternEntry[] {
    return [...this.byId.values()].map(({ id, source, everyRecord }) => ({ id, source, everyRecord }));
  }

  /** The open watches of the patterns `ids` (ids[from .. to)), each once, into `out` (emptied first). */
  watchesOf(ids: ArrayLike<number>, from: number, to: number, out: Watch[]): Watch[] {
    out.length = 0;
    const stamp = newStamp();
    for (let k = from; k < to; k++) {
      const r = this.byId.get(ids[k]!);
      if (r === undefined) continue; // left since the matcher took the list
      for (const w of r.watches) {
        if (w.stamp === stamp || w.ended) continue;
        w.stamp = stamp;
        out.push(w);
      }
    }
    return out;
  }
}

export interface WatchHubStats {
  open: number;
  /** Distinct patterns, by target. */
  rrnames: number;
  rdata: number;
}

export class WatchHub {
  private reserved = 0;
  readonly watches = new Set<Watch>();
  readonly patterns = { rrnames: new PatternRegistry(), rdata: new PatternRegistry() };

  /** Holds a place for one more watch, or refuses with 503 (LIMITS.watchesMax); give it back with unreserve(). */
  reserve(): void {
    if (this.reserved >= LIMITS.watchesMax) throw new ApiError('OVERLOADED');
    this.reserved++;
  }

  unreserve(): void {
    this.reserved--;
  }

  /** A watch on a reserved place; it is matched once add()ed. */
  create(q: WatchQuery, fence: TimeFence, limit: number, compiled: WatchPatterns & { error: undefined }, events: WatchEvents): Watch {
    return new Watch(this, q, fence, limit, compiled.pattern, compiled.exclude, events);
  }

  /** From now on, every batch of new data is matched against `w`. */
  add(w: Watch): void {
    this.watches.add(w);
    this.patterns[w.target].add(w);
  }

  /** Called by Watch.close(): its place is free again. */
  remove(w: Watch): void {
    if (this.watches.delete(w)) this.patterns[w.target].remove(w);
    this.unreserve();
  }

  /** The earliest `since` of the watches: tuples first seen before it interest none. Infinity with none. */
  floor(target?: FlexTarget): number {
    let f = Infinity;
    for (const w of this.watches) if ((target === undefined || w.target === target) && w.since < f) f = w.since;
    return f;
  }

  /** Ends a batch: each watch's kept tuples, sorted, go to its reader. */
  commit(): void {
    for (const w of this.watches) w.commit();
  }

  /** Ends every watch with `message` (the data tier failed). */
  failAll(message: string, error?: unknown): void {
    for (const w of [...this.watches]) w.fail(message, error);
  }

  stats(): WatchHubStats {
    return { open: this.watches.size, rrnames: this.patterns.rrnames.size, rdata: this.patterns.rdata.size };
  }
}
