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
import type { BlobColumns } from '../shard/blob.js';

/** A compiled RE2.Set (the binding declares its type but does not export it). */
type PatternSet = InstanceType<typeof RE2.Set>;

/** Records one range test covers: a handful of name bytes per record, so a few KB of blob. */
const RANGE_RECORDS = 64;

/** What a pattern index reports a record to: the subscribers of every pattern that matched it. */
export interface PatternSubscriber {
  /** Set by the index to tell one record's subscribers apart without a Set per record. */
  stamp: number;
}

/** One count for every index, so that a subscriber's stamp from one never equals another's. */
let stamps = 0;

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
  /** `perSet`: patterns per RE2.Set (tests try others). */
  constructor(private readonly perSet: number = LIMITS.watchPatternsPerSet) {}

  private readonly bySource = new Map<string, Pattern<W>>();
  private readonly groups: Group<W>[] = [];
  /** Subscribers whose pattern matches every record. */
  private readonly everyRecord = new Set<W>();
  private subscribed = 0;
  private readonly hits: W[] = [];

  /** No subscriber at all: nothing to match. */
  get empty(): boolean {
    return this.subscribed === 0;
  }

  add(w: W, p: CompiledPattern): void {
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

  remove(w: W, p: CompiledPattern): void {
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
    for (let a = from; a < to; a += RANGE_RECORDS) {
      const b = Math.min(to, a + RANGE_RECORDS);
      const range = blob.subarray(offsets[a]!, offsets[b]!);
      const live = this.groups.filter((g) => g.patterns.length > 0 && g.test(range));
      if (live.length === 0 && this.everyRecord.size === 0) continue;
      for (let rec = a; rec < b; rec++) {
        if (!wanted(rec)) continue;
        const hits = this.hits;
        hits.length = 0;
        const stamp = ++stamps;
        const take = (w: W) => {
          if (w.stamp === stamp) return;
          w.stamp = stamp;
          hits.push(w);
        };
        for (const w of this.everyRecord) take(w);
        if (live.length > 0) {
          const bytes = blob.subarray(offsets[rec]!, offsets[rec + 1]! - 1);
          for (const g of live) g.match(bytes, (p) => p.subscribers.forEach(take));
        }
        if (hits.length > 0) visit(rec, hits);
      }
    }
  }

  stats(): PatternIndexStats {
    return { patterns: this.bySource.size, sets: this.groups.length, solo: this.groups.filter((g) => g.solo !== undefined).length };
  }
}
