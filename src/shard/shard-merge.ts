// The k-way merge of compaction on the shards' own bytes: RRsets of several
// shards, each in the shard order of rrset-order.ts, come out in that order
// with equal RRsets folded into one (model/sighting.ts's rule), added to an
// RrsetTable without making a string or an object per RRset.
//
// Why not shard-rrsets.ts's Observations merged by their string keys: that
// made, per RRset, its owner (reversed and forward), its bailiwick, each
// rdata text and wire, an Observation and a key string, and then interned
// them all again; a merge of 1 M RRsets spent 4.7 s of 7.9 s CPU there and in
// the garbage collector. Here the order is decided on the mapped bytes,
// part by part as rrset-order.ts's rule says (the joined key orders exactly
// as its parts do), and a shard's rdata and bailiwick rows map to the
// table's ids once per output table.

import type { Sighting } from '../model/sighting.js';
import { addSighting, noSighting } from '../model/sighting.js';
import { compareRecords } from './blob.js';
import type { RrsetTable } from './rrset-table.js';
import type { ShardReader } from './shard-reader.js';

/** One input of the merge: its owner rows [owner, ownerEnd) and the RRset row it stands at. */
class MergeInput {
  owner: number;
  row: number;
  /** The input's place in the merge: of inputs holding equal RRsets, the first staged is the earliest (heap ties). */
  order = 0;
  private ownerRowEnd: number;
  /** The table ids of this shard's rdata and bailiwick rows for the current table; -1 until first seen. */
  private rdataIds: Int32Array;
  private bailiwickIds: Int32Array;
  private idsFor: RrsetTable | undefined;

  constructor(readonly s: ShardReader, fromOwner: number, private readonly ownerEnd: number) {
    this.owner = fromOwner;
    this.row = fromOwner < ownerEnd ? s.ownerStarts[fromOwner]! : 0;
    this.ownerRowEnd = fromOwner < ownerEnd ? s.ownerStarts[fromOwner + 1]! : 0;
    this.rdataIds = new Int32Array(0);
    this.bailiwickIds = new Int32Array(0);
  }

  get done(): boolean {
    return this.owner >= this.ownerEnd;
  }

  /** Moves to the next RRset (the next owner's first when this owner's are done). */
  next(): void {
    this.row++;
    while (this.row >= this.ownerRowEnd && this.owner < this.ownerEnd) {
      this.owner++;
      if (this.owner < this.ownerEnd) {
        this.row = this.s.ownerStarts[this.owner]!;
        this.ownerRowEnd = this.s.ownerStarts[this.owner + 1]!;
      }
    }
  }

  /** This input's row maps for `table`, reset when the merge moved on to a new table. */
  private mapsFor(table: RrsetTable): void {
    if (this.idsFor === table) return;
    this.idsFor = table;
    this.rdataIds = new Int32Array(this.s.rdata.rrtype.length).fill(-1);
    this.bailiwickIds = new Int32Array(this.s.bailiwicks.offsets.length - 1).fill(-1);
  }

  /** Interns the current RRset's rdata and bailiwick into `table` and stages its rdata ids; returns the bailiwick id. */
  stage(table: RrsetTable): number {
    this.mapsFor(table);
    const s = this.s, rs = s.rrsets;
    const ids = table.stagedRows(rs.rdataStarts[this.row + 1]! - rs.rdataStarts[this.row]!);
    for (let j = rs.rdataStarts[this.row]!, k = 0; j < rs.rdataStarts[this.row + 1]!; j++, k++) {
      const r = rs.rdataRows[j]!;
      let id = this.rdataIds[r]!;
      if (id < 0) {
        const text = s.rdata.text;
        id = table.internRdata(s.rdata.rrtype[r]!, text.blob, text.offsets[r]!, text.offsets[r + 1]! - 1,
          s.rdata.wire, s.rdata.wireOffsets[r]!, s.rdata.wireOffsets[r + 1]!);
        this.rdataIds[r] = id;
      }
      ids[k] = id;
    }
    const b = rs.bailiwick[this.row]!;
    let bailiwick = this.bailiwickIds[b]!;
    if (bailiwick < 0) {
      bailiwick = table.internBailiwick(s.bailiwicks.blob, s.bailiwicks.offsets[b]!, s.bailiwicks.offsets[b + 1]! - 1);
      this.bailiwickIds[b] = bailiwick;
    }
    return bailiwick;
  }

  /** Folds the current RRset's sighting into `into`. */
  sighting(into: Sighting): void {
    const rs = this.s.rrsets, i = this.row;
    scratch.count = rs.count[i]!;
    scratch.timeFirst = rs.timeFirst[i]!;
    scratch.timeLast = rs.timeLast[i]!;
    scratch.zoneTimeFirst = rs.zoneTimeFirst[i]!;
    scratch.zoneTimeLast = rs.zoneTimeLast[i]!;
    addSighting(into, scratch);
  }
}

const scratch = noSighting();

/** Sign of the current RRsets of two inputs in the shard order (rrset-order.ts). */
function compareInputs(a: MergeInput, b: MergeInput): number {
  return compareShardRrsets(a.s, a.owner, a.row, b.s, b.owner, b.row);
}

/** Sign of RRset row i (of owner row xo) of shard x and row j (of owner row yo) of shard y, in the shard order (rrset-order.ts). */
export function compareShardRrsets(x: ShardReader, xo: number, i: number, y: ShardReader, yo: number, j: number): number {
  const d = compareRecords(x.owners, xo, y.owners, yo);
  if (d !== 0) return d;
  const t = x.rrsets.rrtype[i]! - y.rrsets.rrtype[j]!;
  if (t !== 0) return t;
  const w = compareRecords(x.bailiwicks, x.rrsets.bailiwick[i]!, y.bailiwicks, y.rrsets.bailiwick[j]!);
  if (w !== 0) return w;
  let p = x.rrsets.rdataStarts[i]!, q = y.rrsets.rdataStarts[j]!;
  const pe = x.rrsets.rdataStarts[i + 1]!, qe = y.rrsets.rdataStarts[j + 1]!;
  for (; p < pe && q < qe; p++, q++) {
    const c = compareRecords(x.rdata.text, x.rrsets.rdataRows[p]!, y.rdata.text, y.rrsets.rdataRows[q]!);
    if (c !== 0) return c;
  }
  return (pe - p) - (qe - q);
}

/**
 * The inputs by their current RRsets (then by order), a binary min-heap: a
 * merge of k shards compares about 2 log2(k) inputs per RRset instead of k
 * (40 inputs: the linear scan for the smallest was a quarter of a merge's
 * CPU, `node --cpu-prof bin/rrscan.js compact --workers 1` of
 * slope-10000000/shards-40).
 */
class InputHeap {
  private readonly a: MergeInput[] = [];

  get size(): number {
    return this.a.length;
  }

  top(): MergeInput {
    return this.a[0]!;
  }

  push(m: MergeInput): void {
    const a = this.a;
    let i = a.length;
    a.push(m);
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!before(m, a[parent]!)) break;
      a[i] = a[parent]!;
      i = parent;
    }
    a[i] = m;
  }

  pop(): MergeInput {
    const a = this.a;
    const top = a[0]!;
    const last = a.pop()!;
    const n = a.length;
    if (n === 0) return top;
    let i = 0;
    for (;;) {
      let child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && before(a[child + 1]!, a[child]!)) child++;
      if (!before(a[child]!, last)) break;
      a[i] = a[child]!;
      i = child;
    }
    a[i] = last;
    return top;
  }
}

/** Heap order: by current RRset, equal ones by input order. */
function before(x: MergeInput, y: MergeInput): boolean {
  const c = compareInputs(x, y);
  return c < 0 || (c === 0 && x.order < y.order);
}

/**
 * Merges owner rows [from[k], to[k]) of each reader, in order, into the
 * table `table()` returns (asked before each RRset, so the caller may start
 * a new table between RRsets); `added` is called after each output RRset
 * with how many input RRsets it folded, and awaited when it returns a promise
 * (a batch being written out).
 */
export async function mergeShardRrsets(readers: readonly ShardReader[], from: readonly number[], to: readonly number[],
  table: () => RrsetTable, added: (folded: number) => Promise<void> | undefined): Promise<void> {
  const heap = new InputHeap();
  readers.forEach((r, k) => {
    const m = new MergeInput(r, from[k]!, to[k]!);
    m.order = k;
    if (!m.done) heap.push(m);
  });
  const sighting = noSighting();
  const equal: MergeInput[] = [];
  let lastTable: RrsetTable | undefined, lastInput: MergeInput | undefined, lastOwnerRow = -1, lastOwner = -1;
  while (heap.size > 0) {
    // The smallest RRset, and every input holding an equal one (the earliest input's first).
    const min = heap.pop();
    equal.length = 0;
    equal.push(min);
    while (heap.size > 0 && compareInputs(heap.top(), min) === 0) equal.push(heap.pop());
    const t = table();
    const bailiwick = min.stage(t);
    // An owner's RRsets come one after another (from any input), and owners in ascending order: a table
    // gets each owner once, at the start of its run, and needs no lookup to know it is new.
    if (t !== lastTable || lastInput === undefined || !(lastInput === min ? lastOwnerRow === min.owner
      : compareRecords(lastInput.s.owners, lastOwnerRow, min.s.owners, min.owner) === 0)) {
      lastOwner = t.appendOwnerReversed(min.s.owners.blob, min.s.owners.offsets[min.owner]!, min.s.owners.offsets[min.owner + 1]! - 1);
      lastTable = t;
    }
    lastInput = min;
    lastOwnerRow = min.owner;
    const owner = lastOwner;
    sighting.count = 0;
    sighting.timeFirst = sighting.timeLast = sighting.zoneTimeFirst = sighting.zoneTimeLast = 0;
    for (const m of equal) m.sighting(sighting);
    t.addStaged(owner, min.s.rrsets.rrtype[min.row]!, bailiwick, sighting);
    const folded = equal.length;
    for (const m of equal) {
      m.next();
      if (!m.done) heap.push(m);
    }
    const writing = added(folded);
    if (writing !== undefined) await writing;
  }
}
