// Standard search over the local shards: one sorted source per shard, read
// through the ShardReader's query methods on the front-end thread.
//
// These are index lookups (binary search on sorted blobs and address keys),
// so their cost follows what they return, not the data set: an exact name is
// a few dozen comparisons per shard, far less than a hand-off to a worker.
// A source reads at most LIMITS.lookupRowsPerTurn index rows (kept or
// dropped by its filters) before it answers WAIT and lets a loop iteration
// pass, so a wildcard whose rows a fence drops cannot hold the thread.
//
// Keys: an rrset row sorts by its index key (reversed owner, or forward name
// for right-hand wildcards), then the RRset's own sort key; an rdata row by
// its index key (address or name), rrtype, text and owner. Several RRsets of
// one shard can hold the same record under one rdata key; with aggr such
// rows are one result, so the source folds them into one item. Without aggr
// every row stands alone: its key gets the shard's position and the row's
// sequence appended, so equal keys stay apart and ordered by shard.

import { LIMITS } from '../../config/limits.js';
import { failIf } from '../../lib/faults.js';
import { nextTurn } from '../../lib/turns.js';
import { reverseName } from '../../dns/name.js';
import { keepType } from '../../model/filters.js';
import { addSighting, noSighting, type Sighting } from '../../model/sighting.js';
import type { LookupQuery } from '../../query/lookup-query.js';
import type { LookupResult } from '../../render/result-lines.js';
import { RRSET_KEY_SEPARATOR as SEP, rrsetKeyTail, rrtypeKeyText } from '../../shard/rrset-order.js';
import type { ShardReader } from '../../shard/shard-reader.js';
import { END, HAS, WAIT, type LookupSource, type OpenSources, type SourceEvents, type SourceState } from '../sources.js';

/** A row an index read produced: an RRset (rdata -1) or one record of one (rdata lookups). */
interface Hit {
  readonly rrset: number;
  readonly rdata: number;
  /** The index key it sorts under, before the RRset's own part. */
  readonly indexKey: string;
  /** rrset rows: the owner name as the client reads it, when the index key gives it for free. */
  readonly rrname: string | undefined;
}

/**
 * Rows matching the query, in key order; null for a row read and dropped
 * (the source counts its work). Time fences are not judged here: they judge
 * the result a client receives, which with aggr sums rows of several shards
 * (search/lookup-search.ts).
 */
function* hits(s: ShardReader, q: LookupQuery): Generator<Hit | null> {
  const passes = (i: number, bailiwickId: number): boolean =>
    keepType(q.typeFilter, s.rrtype(i)) && (bailiwickId < 0 || s.hasBailiwick(i, bailiwickId));
  const v = q.value;
  if (q.target === 'rrset') {
    if (v.kind !== 'name') return;
    const bailiwickId = q.bailiwick === undefined ? -1 : s.bailiwickId(q.bailiwick);
    if (q.bailiwick !== undefined && bailiwickId < 0) return;
    // Right-hand wildcards key owners by their forward name, the others by the reversed one.
    const forward = v.match.mode === 'starts' || v.match.mode === 'one-more';
    for (const [o, indexKey] of s.ownersMatching(v.match)) {
      const rrname = forward ? indexKey : reverseName(indexKey);
      for (let i = s.rrsetsStart(o); i < s.rrsetsStart(o + 1); i++) {
        yield passes(i, bailiwickId) ? { rrset: i, rdata: -1, indexKey, rrname } : null;
      }
    }
    return;
  }
  const rows = v.kind === 'ip' ? s.rdataByAddress(v.family, v.low, v.high)
    : v.kind === 'raw' ? s.rdataByWire(v.wire) : s.rdataByName(v.match);
  for (const [r, indexKey] of rows) {
    if (!keepType(q.typeFilter, s.rdataType(r))) {
      yield null;
      continue;
    }
    for (let j = s.rdataRrsetsStart(r); j < s.rdataRrsetsStart(r + 1); j++) {
      const i = s.rdataRrset(j);
      yield passes(i, -1) ? { rrset: i, rdata: r, indexKey, rrname: undefined } : null;
    }
  }
}

/** A hit's merge key: its index key, then the RRset's own sort key (rrset rows) or rrtype, text and owner (rdata rows). */
function keyOf(s: ShardReader, h: Hit): string {
  if (h.rdata < 0) return `${h.indexKey}${SEP}${rrsetKeyTail(s.rrtype(h.rrset), s.bailiwick(h.rrset), s.rdataTexts(h.rrset))}`;
  return `${h.indexKey}${SEP}${rrtypeKeyText(s.rdataType(h.rdata))}${SEP}${s.rdataText(h.rdata)}${SEP}${s.reversedOwner(h.rrset)}`;
}

class ShardLookupSource implements LookupSource {
  private readonly rows: Generator<Hit | null>;
  private current: Hit | undefined;
  /** The row after `current`, read to see whether it shares its key (aggr rdata lookups). */
  private next: Hit | undefined;
  private currentKey: string | undefined;
  private readonly sighting: Sighting = noSighting();
  private folded: Sighting | undefined;
  private ended = false;
  private waiting = false;
  private seq = 0;
  /** Rdata rows of several RRsets may share a key in one shard: with aggr they are one item. */
  private readonly fold: boolean;

  constructor(private readonly s: ShardReader, q: LookupQuery, private readonly position: number,
    private readonly aggr: boolean, private readonly events: SourceEvents) {
    this.rows = hits(s, q);
    this.fold = aggr && q.target === 'rdata';
  }

  state(): SourceState {
    if (this.current !== undefined) return HAS;
    if (this.ended) return END;
    if (this.waiting) return WAIT;
    const h = this.next ?? this.read();
    this.next = undefined;
    if (h === undefined) return this.ended ? END : WAIT;
    this.current = h;
    this.currentKey = undefined;
    this.folded = undefined;
    if (this.fold) this.foldEqual();
    return HAS;
  }

  /** The next row, or undefined at the end or when this turn's reads are used up (then WAIT until the next turn). */
  private read(): Hit | undefined {
    for (let n = 0; n < LIMITS.lookupRowsPerTurn; n++) {
      failIf('shard-read', this.s.name);
      const r = this.rows.next();
      if (r.done) {
        this.ended = true;
        return undefined;
      }
      if (r.value !== null) return r.value;
    }
    this.waiting = true;
    void nextTurn().then(() => {
      this.waiting = false;
      this.events.ready();
    });
    return undefined;
  }

  /** Folds following rows with the current key into the current item. */
  private foldEqual(): void {
    const key = this.key();
    for (;;) {
      const r = this.rows.next();
      if (r.done) {
        this.ended = true;
        return;
      }
      if (r.value === null) continue;
      if (keyOf(this.s, r.value) !== key) {
        this.next = r.value;
        return;
      }
      this.folded ??= this.s.sighting(this.current!.rrset, noSighting());
      addSighting(this.folded, this.s.sighting(r.value.rrset, this.sighting));
    }
  }

  key(): string {
    if (this.currentKey === undefined) {
      const k = keyOf(this.s, this.current!);
      // \u0000 sorts before every byte a key holds, so equal keys stay together, ordered by shard, then row.
      this.currentKey = this.aggr ? k
        : `${k}\u0000${this.position.toString(36).padStart(4, '0')}${(this.seq++).toString(36).padStart(8, '0')}`;
    }
    return this.currentKey;
  }

  row(): LookupResult {
    const s = this.s;
    const h = this.current!;
    const rrsetRow = h.rdata < 0;
    return {
      rrname: h.rrname ?? s.ownerName(h.rrset),
      rrtype: s.rrtype(h.rrset),
      bailiwick: rrsetRow ? s.bailiwick(h.rrset) : undefined,
      rdata: rrsetRow ? s.rdataTexts(h.rrset) : s.rdataText(h.rdata),
      sighting: this.folded ?? s.sighting(h.rrset, this.sighting),
    };
  }

  advance(): void {
    this.current = undefined;
  }
}

/** One source per shard, in shard order; `close` runs when the search ends (a source reads only when pulled: nothing to stop). */
export function openLookupSources(shards: readonly ShardReader[], q: LookupQuery, events: SourceEvents,
  close: () => void): OpenSources<LookupSource> {
  return { sources: shards.map((s, i) => new ShardLookupSource(s, q, i, q.aggr, events)), close };
}
