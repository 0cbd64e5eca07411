// Every open watch's pattern over one target (rrnames or rdata), matched in
// one pass: the patterns' blob forms (query/pattern.ts) compiled into
// RE2.Sets, so that the cost of matching a published shard grows with its
// records, not with the number of watches.
//
// How a range of records is matched: a set's test() over the range's bytes
// of the blob (blob patterns never match across the `\n` between records,
// so a range with no match holds no matching record) rules out most ranges
// in one DFA pass; only the records of a range that tests positive are
// matched one by one (set.match), which names the patterns. Measured on
// bench names: 1,000 distinct simple patterns test 100,000 names in 7.7 ms
// in one set once its DFA is warm; matching each name with match() costs
// 10x that; testing each pattern by itself 30x.
//
// Sets hold LIMITS.watchPatternsPerSet patterns each (limits.ts says why),
// built lazily: a watch that opens or closes marks its set stale, and
// prepare() compiles stale sets one per call, so a caller compiling between
// turns never holds the thread for more than one set. A set RE2 cannot
// build or run (its DFA out of memory: RE2::Set has no NFA to fall back on)
// is replaced by its patterns tested one by one, which always works.
//
// Watches that share a pattern share its place; patterns that match every
// record (`.`, `^.*$`: CompiledPattern.everyRecord) need no RE2 at all.

import RE2 from 're2';
import { LIMITS } from '../config/limits.js';
import type { CompiledPattern } from '../query/pattern.js';

/** What the index needs of a compiled pattern. */
export type MatchPattern = Pick<CompiledPattern, 'blobSource' | 'everyRecord'>;
import type { BlobColumns } from '../shard/blob.js';

/** A compiled RE2.Set (the binding declares its type but does not export it). */
type PatternSet = InstanceType<typeof RE2.Set>;


/** Records below which a range that tested positive is matched record by record rather than halved again. */
const NARROW_RECORDS = 16;

/** What a pattern index reports a record to: the subscribers of every pattern that matched it. */
export interface PatternSubscriber {
  /** Set by the index to tell one record's subscribers apart without a Set per record. */
  stamp: number;
}

/** One count for every index, so that a subscriber's stamp from one never equals another's. */
let stamps = 0;

/** A stamp no subscriber holds yet: for telling apart, without a Set, the subscribers gathered for one record. */
export function newStamp(): number {
  return ++stamps;
}

interface Pattern<W> {
  readonly source: string;
  readonly subscribers: Set<W>;
  group: Group<W>;
}

/** Up to LIMITS.watchPatternsPerSet patterns and their set, once built. */
class Group<W> {
  patterns: Pattern<W>[] = [];
  set: PatternSet | undefined;
  /** Patterns tested one by one: RE2 could not build or run this group's set. */
  solo: RE2[] | undefined;
  stale = true;

  /** Compiles the set of this group's live patterns (those with a subscriber). */
  build(): void {
    this.patterns = this.patterns.filter((p) => p.subscribers.size > 0);
    this.stale = false;
    this.solo = undefined;
    this.set = undefined;
    if (this.patterns.length === 0) return;
    try {
      this.set = new RE2.Set(this.patterns.map((p) => p.source));
    } catch {
      this.fallBack();
    }
  }

  /** One RE2 per pattern: every source compiled by itself when its watch opened, so this cannot fail. */
  fallBack(): void {
    this.set = undefined;
    this.solo = this.patterns.map((p) => new RE2(p.source));
  }

  test(bytes: Buffer): boolean {
    if (this.set !== undefined) {
      try {
        return this.set.test(bytes);
      } catch {
        this.fallBack();
      }
    }
    return this.solo!.some((re) => re.test(bytes));
  }

  /** The patterns matching one record's bytes. */
  match(bytes: Buffer, out: (p: Pattern<W>) => void): void {
    if (this.set !== undefined) {
      try {
        for (const i of this.set.match(bytes)) out(this.patterns[i]!);
        return;
      } catch {
        this.fallBack();
      }
    }
    this.solo!.forEach((re, i) => {
      if (re.test(bytes)) out(this.patterns[i]!);
    });
  }
}

export interface PatternIndexStats {
  patterns: number;
  sets: number;
  /** Sets replaced by their patterns one by one (RE2 could not build or run them). */
  solo: number;
}

export class PatternIndex<W extends PatternSubscriber> {
  private readonly want: Uint8Array;

  /**
   * `perSet`: patterns per RE2.Set (tests try others). `rangeRecords`:
   * records one test() covers. Longer ranges cost fewer calls into the
   * binding (1,000 simple patterns: 0.97 us a name in ranges of 64, 0.48 in
   * ranges of 1,024), but a range is what runs between two looks at the
   * clock: a thread of its own takes long ones, the front end short ones.
   */
  constructor(private readonly perSet: number = LIMITS.watchPatternsPerSet, private readonly rangeRecords = 64) {
    this.want = new Uint8Array(rangeRecords);
  }

  private readonly bySource = new Map<string, Pattern<W>>();
  private readonly groups: Group<W>[] = [];
  /** Subscribers whose pattern matches every record. */
  private readonly everyRecord = new Set<W>();
  private subscribed = 0;
  private readonly hits: W[] = [];
  /** Per record of the range being matched: the patterns that matched it. */
  private readonly matched: (Pattern<W>[] | undefined)[] = [];

  /** No subscriber at all: nothing to match. */
  get empty(): boolean {
    return this.subscribed === 0;
  }

  add(w: W, p: MatchPattern): void {
    this.subscribed++;
    if (p.everyRecord) {
      this.everyRecord.add(w);
      return;
    }
    let pattern = this.bySource.get(p.blobSource);
    if (pattern === undefined) {
      const group = this.groups.find((g) => g.patterns.length < this.perSet) ?? this.newGroup();
      pattern = { source: p.blobSource, subscribers: new Set(), group };
      group.patterns.push(pattern);
      group.stale = true;
      this.bySource.set(p.blobSource, pattern);
    }
    pattern.subscribers.add(w);
  }

  remove(w: W, p: MatchPattern): void {
    if (p.everyRecord) {
      if (this.everyRecord.delete(w)) this.subscribed--;
      return;
    }
    const pattern = this.bySource.get(p.blobSource);
    if (pattern === undefined || !pattern.subscribers.delete(w)) return;
    this.subscribed--;
    if (pattern.subscribers.size > 0) return;
    // A pattern nobody watches leaves its set at the next build; until then its matches name no one.
    this.bySource.delete(p.blobSource);
    pattern.group.stale = true;
  }

  private newGroup(): Group<W> {
    const g = new Group<W>();
    this.groups.push(g);
    return g;
  }

  /** Compiles one stale set; true once none is stale (call again after a turn until then). */
  prepare(): boolean {
    const stale = this.groups.find((g) => g.stale);
    if (stale === undefined) return true;
    stale.build();
    if (stale.patterns.length === 0) this.groups.splice(this.groups.indexOf(stale), 1);
    return !this.groups.some((g) => g.stale);
  }

  /**
   * Matches records [from, to) of `cols` (at most a few hundred: callers
   * slice their work by time) and calls `visit` for each record that
   * `wanted` keeps and some pattern matches, with the subscribers of every
   * matching pattern (each once; the array is reused: copy what outlives
   * the call). prepare() must have returned true since the last add.
   */
  match(cols: BlobColumns, from: number, to: number, wanted: (rec: number) => boolean,
    visit: (rec: number, subscribers: readonly W[]) => void): void {
    const { blob, offsets } = cols;
    const want = this.want;
    const matched = this.matched;
    for (let a = from; a < to; a += this.rangeRecords) {
      const b = Math.min(to, a + this.rangeRecords);
      // Ranges with nothing wanted (old data a compaction merged again) cost no RE2 pass.
      let any = false;
      for (let rec = a; rec < b; rec++) any = (want[rec - a] = wanted(rec) ? 1 : 0) === 1 || any;
      if (!any) continue;
      const range = blob.subarray(offsets[a], offsets[b]);
      const live = this.groups.filter((g) => g.patterns.length > 0 && g.test(range));
      if (live.length === 0 && this.everyRecord.size === 0) continue;
      // Which records each set that tested positive matched: halving the range while it tests positive
      // (a hit or two among a thousand records costs a dozen tests, not a thousand matches).
      matched.length = 0;
      for (const g of live) this.narrow(g, cols, a, b, a, (rec, p) => (matched[rec - a] ??= []).push(p));
      for (let rec = a; rec < b; rec++) {
        if (want[rec - a] === 0) continue;
        const patterns = matched[rec - a];
        if (patterns === undefined && this.everyRecord.size === 0) continue;
        const hits = this.hits;
        hits.length = 0;
        const stamp = newStamp();
        const take = (w: W) => {
          if (w.stamp === stamp) return;
          w.stamp = stamp;
          hits.push(w);
        };
        for (const w of this.everyRecord) take(w);
        if (patterns !== undefined) for (const p of patterns) p.subscribers.forEach(take);
        if (hits.length > 0) visit(rec, hits);
      }
    }
  }

  /** The records of [lo, hi) (wanted ones: `want`, from `base`) that group `g` matches, with each pattern, to `out`. */
  private narrow(g: Group<W>, cols: BlobColumns, lo: number, hi: number, base: number, out: (rec: number, p: Pattern<W>) => void): void {
    const { blob, offsets } = cols;
    if (hi - lo <= NARROW_RECORDS) {
      for (let rec = lo; rec < hi; rec++) {
        if (this.want[rec - base] === 0) continue;
        g.match(blob.subarray(offsets[rec], offsets[rec + 1]! - 1), (p) => out(rec, p));
      }
      return;
    }
    const mid = (lo + hi) >>> 1;
    if (g.test(blob.subarray(offsets[lo], offsets[mid]))) this.narrow(g, cols, lo, mid, base, out);
    if (g.test(blob.subarray(offsets[mid], offsets[hi]))) this.narrow(g, cols, mid, hi, base, out);
  }

  stats(): PatternIndexStats {
    return { patterns: this.bySource.size, sets: this.groups.length, solo: this.groups.filter((g) => g.solo !== undefined).length };
  }
}

/** A pattern of the hub's registry (watch-hub.ts), as a matcher knows it: by id. */
export interface PatternEntry {
  id: number;
  source: string;
  everyRecord: boolean;
}

/** A pattern id as a subscriber of the index. */
interface PatternRef extends PatternSubscriber {
  readonly entry: PatternEntry;
}

/**
 * A PatternIndex over pattern ids, kept equal to a registry's list by
 * sync(): patterns that left are removed and new ones added, so the sets of
 * the patterns that stayed keep their warm DFAs. What the local tier's match
 * thread and the ClickHouse feed match with.
 */
export class IdPatterns {
  readonly index: PatternIndex<PatternRef>;

  /** `rangeRecords`: see PatternIndex. */
  constructor(rangeRecords?: number) {
    this.index = new PatternIndex<PatternRef>(LIMITS.watchPatternsPerSet, rangeRecords);
  }

  private readonly refs = new Map<number, PatternRef>();
  /** The registry version last synced, -1 before the first. */
  version = -1;

  sync(version: number, list: readonly PatternEntry[]): void {
    const wanted = new Map(list.map((e) => [e.id, e]));
    for (const [id, ref] of this.refs) {
      if (wanted.has(id)) continue;
      this.index.remove(ref, { blobSource: ref.entry.source, everyRecord: ref.entry.everyRecord });
      this.refs.delete(id);
    }
    for (const e of list) {
      if (this.refs.has(e.id)) continue;
      const ref: PatternRef = { stamp: 0, entry: e };
      this.refs.set(e.id, ref);
      this.index.add(ref, { blobSource: e.source, everyRecord: e.everyRecord });
    }
    this.version = version;
  }

  /** Builds every stale set (a thread of its own may take the time). */
  prepareAll(): void {
    while (!this.index.prepare()) { /* one set per call */ }
  }

  /**
   * Records of [from, to) that `wanted` keeps and some pattern matches, with
   * the ids of those patterns: appended to `records`, `starts` (where each
   * record's ids begin in `ids`) and `ids`.
   */
  matchInto(cols: BlobColumns, from: number, to: number, wanted: (rec: number) => boolean,
    out: { records: number[]; starts: number[]; ids: number[] }): void {
    this.index.match(cols, from, to, wanted, (rec, refs) => {
      out.records.push(rec);
      out.starts.push(out.ids.length);
      for (const r of refs) out.ids.push(r.entry.id);
    });
  }
}
