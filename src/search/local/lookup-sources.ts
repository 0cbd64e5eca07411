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
// rows are one item, so the source folds them into one item. Without aggr
// every row stands alone: its key gets the shard's position and the row's
// sequence appended, so equal keys stay apart and ordered by shard.
//
// Cost per row (issue 22): the rows are walked by a cursor, not generators,
// and a row lives in the source's own fields, not an object; a source that
// is the answer's only one (alone()) renders its results' lines directly, a
// batch at a time, as bytes from the shard's records (bulk(): no
// LookupResult, no merge, no string per row: render/lookup-line-bytes.ts),
// and judges the time fence itself as the paginator's combiner would (a
// lone source's item is its own sum), so that what it has is what it would
// write. Rows a fence drops count against the same per-turn bound as the
// rows read.

import { LIMITS } from '../../config/limits.js';
import { failIf } from '../../lib/faults.js';
import { nextTurn } from '../../lib/turns.js';
import { keepType, type TimeFence } from '../../model/filters.js';
import { addSighting, copySighting, noSighting, type Sighting } from '../../model/sighting.js';
import type { LookupQuery } from '../../query/lookup-query.js';
import { LookupLineBytes } from '../../render/lookup-line-bytes.js';
import { RRSET_KEY_SEPARATOR as SEP, rrsetKeyTail, rrtypeKeyText } from '../../shard/rrset-order.js';
import type { ShardReader } from '../../shard/shard-reader.js';
import { keptByFence } from '../lookup-search.js';
import { END, HAS, WAIT, type LookupSource, type SourceEvents, type SourceState } from '../sources.js';

/**
 * bulk()'s lines, one writer for every source of this thread: the paginator
 * hands what bulk() returns to the sink, which writes or copies it before
 * the call returns (ResultSink.bytes), so its buffer is free again before
 * any source's next bulk(). A writer per source cost a 1,000-row answer a
 * buffer grown three times and the collector's time to reclaim it.
 */
const lines = new LookupLineBytes();

/** What a lone source's bulk() renders: the lines of results as the client reads them. */
export interface LookupRendering {
  /** The answer's fence (the key's and the request's), judged on each result. */
  readonly fence: TimeFence;
  readonly humantime: boolean;
}

/**
 * The rows matching the query, in key order, one at a time: each owner (or
 * rdata record) the index yields, then the RRset rows under it. A row is
 * left in `rrset`, `rdata`, `owner` and `indexKey` (rdata -1 for an rrset
 * row).
 */
class RowCursor {
  rrset = -1;
  rdata = -1;
  /** The owner row of an rrset row (-1 for rdata rows: the RRset's owner is looked up when needed). */
  owner = -1;
  indexKey = '';
  /** RRset rows [at, end) of the current owner, or rdata-to-RRset entries [at, end) of the current record. */
  private at = 0;
  private end = 0;
  private readonly keys: Iterator<readonly [number, string]> | undefined;
  private readonly rrsetTarget: boolean;
  private readonly bailiwickId: number;
  private readonly typeFilter: LookupQuery['typeFilter'];

  constructor(private readonly s: ShardReader, q: LookupQuery) {
    const v = q.value;
    this.typeFilter = q.typeFilter;
    this.rrsetTarget = q.target === 'rrset';
    this.bailiwickId = q.bailiwick === undefined ? -1 : s.bailiwickId(q.bailiwick);
    if (this.rrsetTarget) {
      if (v.kind !== 'name' || (q.bailiwick !== undefined && this.bailiwickId < 0)) return;
      this.keys = s.ownersMatching(v.match)[Symbol.iterator]();
      return;
    }
    this.keys = (v.kind === 'ip' ? s.rdataByAddress(v.family, v.low, v.high)
      : v.kind === 'raw' ? s.rdataByWire(v.wire) : s.rdataByName(v.match))[Symbol.iterator]();
  }

  /**
   * Moves to the next row: 1 when it passes the filters, 0 when it was read
   * and dropped (the caller counts its work), -1 at the end.
   */
  step(): number {
    const s = this.s;
    while (this.at >= this.end) {
      const next = this.keys?.next();
      if (next === undefined || next.done === true) return -1;
      const [row, indexKey] = next.value;
      this.indexKey = indexKey;
      if (this.rrsetTarget) {
        this.owner = row;
        this.at = s.rrsetsStart(row);
        this.end = s.rrsetsStart(row + 1);
        continue;
      }
      this.rdata = row;
      this.at = s.rdataRrsetsStart(row);
      this.end = s.rdataRrsetsStart(row + 1);
      // A record of a type not asked for is one row read and dropped, whatever RRsets hold it.
      if (!keepType(this.typeFilter, s.rdataType(row))) {
        this.at = this.end;
        return 0;
      }
    }
    const j = this.at++;
    if (this.rrsetTarget) {
      this.rrset = j;
      this.rdata = -1;
      return keepType(this.typeFilter, s.rrtype(j)) && (this.bailiwickId < 0 || s.hasBailiwick(j, this.bailiwickId)) ? 1 : 0;
    }
    this.rrset = s.rdataRrset(j);
    return keepType(this.typeFilter, s.rrtype(this.rrset)) ? 1 : 0;
  }
}

/** A row's merge key: its index key, then the RRset's own sort key (rrset rows) or rrtype, text and owner (rdata rows). */
function keyOf(s: ShardReader, rrset: number, rdata: number, indexKey: string): string {
  if (rdata < 0) return `${indexKey}${SEP}${rrsetKeyTail(s.rrtype(rrset), s.bailiwick(rrset), s.rdataTexts(rrset))}`;
  return `${indexKey}${SEP}${rrtypeKeyText(s.rdataType(rdata))}${SEP}${s.rdataText(rdata)}${SEP}${s.reversedOwner(rrset)}`;
}

class ShardLookupSource implements LookupSource {
  private readonly rows: RowCursor;
  /** The current item: a row of `rows` (when `hasCurrent`), its key once built. */
  private hasCurrent = false;
  private rrset = -1;
  private rdata = -1;
  private owner = -1;
  private indexKey = '';
  /** The cursor holds the row after the current one, read to see whether it shares its key (aggr rdata lookups). */
  private pending = false;
  /** The current item's key, once built (a merge asks for it only where index keys tie: keyHead). */
  private currentKey: string | undefined;
  /** A row's own sighting, read into this one object. */
  private readonly rowSighting: Sighting = noSighting();
  private folded: Sighting | undefined;
  private ended = false;
  private waiting = false;
  /** Rows this source may still read before it waits a turn (LIMITS.lookupRowsPerTurn). */
  private budget: number = LIMITS.lookupRowsPerTurn;
  /** The answer is this source's alone: items outside the fence are dropped here (module comment). */
  private lone = false;
  private seq = 0;
  /** Rdata rows of several RRsets may share a key in one shard: with aggr they are one item. */
  private readonly fold: boolean;
  bulkCount = 0;

  constructor(private readonly s: ShardReader, q: LookupQuery, private readonly position: number,
    private readonly aggr: boolean, private readonly events: SourceEvents, private readonly rendering: LookupRendering) {
    this.rows = new RowCursor(s, q);
    this.fold = aggr && q.target === 'rdata';
  }

  state(): SourceState {
    if (this.hasCurrent) return HAS;
    for (;;) {
      if (this.ended && !this.pending) return END;
      if (this.waiting) return WAIT;
      if (this.pending) this.pending = false;
      else if (!this.read()) return this.ended ? END : WAIT;
      this.take();
      this.currentKey = undefined;
      this.folded = undefined;
      if (this.fold) this.foldEqual();
      if (!this.lone || keptByFence(this.folded ?? this.s.sighting(this.rrset, this.rowSighting), this.rendering.fence)) break;
      // Dropped by the fence: a row read, as one a filter drops.
      if (--this.budget <= 0) this.waitTurn();
    }
    this.hasCurrent = true;
    return HAS;
  }

  /** The answer is this source's alone (paginator.ts BulkSource): from now on it judges the fence itself. */
  alone(): void {
    this.lone = true;
  }

  /** The cursor's row becomes the current one. */
  private take(): void {
    const r = this.rows;
    this.rrset = r.rrset;
    this.rdata = r.rdata;
    this.owner = r.owner;
    this.indexKey = r.indexKey;
  }

  /** Moves the cursor to the next kept row: false at the end or when this turn's reads are used up (then WAIT until the next turn). */
  private read(): boolean {
    const rows = this.rows;
    while (this.budget > 0) {
      this.budget--;
      failIf('shard-read', this.s.name);
      const r = rows.step();
      if (r < 0) {
        this.ended = true;
        return false;
      }
      if (r > 0) return true;
    }
    this.waitTurn();
    return false;
  }

  /** WAIT until a later turn of the event loop, then read on with a fresh budget. */
  private waitTurn(): void {
    if (this.waiting) return;
    this.waiting = true;
    void nextTurn().then(() => {
      this.waiting = false;
      this.budget = LIMITS.lookupRowsPerTurn;
      this.events.ready();
    });
  }

  /**
   * Folds the following rows that share the current row's key into the
   * current item. In one shard, rows share a key exactly when they share
   * its index key, record and owner (records and owners are each unique in
   * a shard), so no key is built to compare them.
   */
  private foldEqual(): void {
    const s = this.s;
    const rows = this.rows;
    if (this.owner < 0) this.owner = s.ownerOf(this.rrset);
    for (;;) {
      const r = rows.step();
      if (r < 0) {
        this.ended = true;
        return;
      }
      if (r === 0) continue;
      if (rows.rdata !== this.rdata || rows.indexKey !== this.indexKey || s.ownerOf(rows.rrset) !== this.owner) {
        this.pending = true;
        return;
      }
      this.folded ??= s.sighting(this.rrset, noSighting());
      addSighting(this.folded, s.sighting(rows.rrset, this.rowSighting));
    }
  }

  keyHead(): string {
    return this.indexKey;
  }

  key(): string {
    if (this.currentKey === undefined) {
      const k = keyOf(this.s, this.rrset, this.rdata, this.indexKey);
      // \u0000 sorts before every byte a key holds, so equal keys stay together, ordered by shard, then row.
      this.currentKey = this.aggr ? k
        : `${k}\u0000${this.position.toString(36).padStart(4, '0')}${(this.seq++).toString(36).padStart(8, '0')}`;
    }
    return this.currentKey;
  }

  sighting(into: Sighting): Sighting {
    return this.folded === undefined ? this.s.sighting(this.rrset, into) : copySighting(into, this.folded);
  }

  line(w: LookupLineBytes, sighting: Readonly<Sighting>, humantime: boolean): void {
    this.render(w, sighting, humantime);
  }

  advance(): void {
    this.hasCurrent = false;
  }

  /**
   * Once alone(): the lines of up to `max` results from the current one on,
   * moving past them: as a string when short, else as bytes valid until the
   * next bulk() of any source; `bulkCount` says how many. Stops early when
   * the source has no item ready (WAIT or END).
   */
  bulk(max: number): string | Uint8Array {
    const w = lines;
    const humantime = this.rendering.humantime;
    w.clear();
    let n = 0;
    while (n < max && this.state() === HAS) {
      this.render(w, this.folded ?? this.s.sighting(this.rrset, this.rowSighting), humantime);
      this.hasCurrent = false;
      n++;
    }
    this.bulkCount = n;
    return w.takeLines(LIMITS.corkPieceBytes);
  }

  /** The current item's line with `sighting` into `w`: lookupLine's text (result-lines.ts), from the shard's bytes. */
  private render(w: LookupLineBytes, sighting: Readonly<Sighting>, humantime: boolean): void {
    const s = this.s;
    const rrset = this.rrset;
    w.begin(sighting, humantime);
    const owners = s.owners;
    const o = this.owner >= 0 ? this.owner : s.ownerOf(rrset);
    w.owner(owners.blob, owners.offsets[o]!, owners.offsets[o + 1]! - 1);
    w.rrtype(s.rrtype(rrset));
    const texts = s.rdata.text;
    if (this.rdata >= 0) {
      w.rdata(texts.blob, texts.offsets[this.rdata]!, texts.offsets[this.rdata + 1]! - 1);
      return;
    }
    const bailiwicks = s.bailiwicks;
    const b = s.bailiwickOf(rrset);
    const bStart = bailiwicks.offsets[b]!, bEnd = bailiwicks.offsets[b + 1]! - 1;
    if (bEnd > bStart) w.bailiwick(bailiwicks.blob, bStart, bEnd);
    for (let j = 0, n = s.rdataCount(rrset); j < n; j++) {
      const r = s.rdataRow(rrset, j);
      w.record(texts.blob, texts.offsets[r]!, texts.offsets[r + 1]! - 1);
    }
    w.endRecords();
  }
}

/**
 * One source per shard, in shard order (a source reads only when pulled: closing them stops nothing).
 * `rendering`: how a lone source renders its results (bulk()).
 */
export function openLookupSources(shards: readonly ShardReader[], q: LookupQuery, rendering: LookupRendering,
  events: SourceEvents): LookupSource[] {
  const sources: ShardLookupSource[] = [];
  for (let i = 0; i < shards.length; i++) sources.push(new ShardLookupSource(shards[i]!, q, i, q.aggr, events, rendering));
  return sources;
}
