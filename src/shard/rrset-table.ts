// Aggregation of observations into RRsets, held in columns.
//
// Key: (rrname, rrtype, bailiwick, rdata set). Merging takes the earliest
// first sighting, the latest last sighting (sensor and zone separately) and
// sums counts. The rdata set of each RRset is deduplicated and ordered by
// wire form, so two sightings of the same records in another order meet.
//
// Why columns and not one object per RRset: an ingest run holds millions of
// RRsets. Kept as Observation objects (strings, arrays, one Uint8Array per
// record) they cost about 2 KB each, the writer then spent a quarter of its
// time in the garbage collector, and every index it built hashed the same
// strings again. Here each owner name, bailiwick and (rrtype, rdata) value is
// interned once into a small integer, its text kept as bytes in a blob
// (interned-blob.ts: no string or Map entry per value is retained); an RRset
// is a row of typed columns; the wire bytes of all rdata live in one arena.
// The shard writer reads these columns and blobs directly (shard-writer.ts).
//
// Memory is the caller's to bound: `size` tells how many distinct RRsets are
// held, and ingest hands the table to the writer and starts a new one when it
// passes the --memory-rrsets budget (LIMITS.ingestRrsetsInMemoryMax).

import { reverseNameBytes } from '../dns/name.js';
import type { Observation, Rdata } from '../model/observation.js';
import { addSighting, noSighting, type Sighting } from '../model/sighting.js';
import { InternedBlob } from './interned-blob.js';

type TypedArray = Uint8Array | Uint16Array | Uint32Array | Int32Array | Float64Array;
interface TypedArrayClass<T extends TypedArray> {
  new (length: number): T;
}

/** An append-only typed column that doubles its storage as it grows. */
export class Column<T extends TypedArray> {
  private data: T;
  length = 0;

  constructor(private readonly kind: TypedArrayClass<T>, initial = 1024) {
    this.data = new kind(initial);
  }

  push(v: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = v;
  }

  /** Appends a run of values (the wire bytes of one record). */
  pushAll(values: ArrayLike<number> & { length: number }): void {
    if (this.length + values.length > this.data.length) this.grow(this.length + values.length);
    (this.data as Uint8Array).set(values, this.length);
    this.length += values.length;
  }

  /** A column holding exactly `values` (a table rebuilt from its data: RrsetTable's constructor). */
  static of<T extends TypedArray>(kind: TypedArrayClass<T>, values: T): Column<T> {
    const c = new Column(kind, 0);
    c.data = values;
    c.length = values.length;
    return c;
  }

  get(i: number): number {
    return this.data[i]!;
  }

  set(i: number, v: number): void {
    this.data[i] = v;
  }

  /** Bytes the column's storage holds, its unused capacity included. */
  get allocatedBytes(): number {
    return this.data.byteLength;
  }

  /** The filled part, as a view (valid until the next push). */
  view(): T {
    return this.data.subarray(0, this.length) as T;
  }

  private grow(need: number): void {
    let size = Math.max(1, this.data.length * 2);
    while (size < need) size *= 2;
    const next = new this.kind(size);
    next.set(this.data);
    this.data = next;
  }
}

/** RRsets per owner found by walking its chain; beyond, by key (see RrsetTable). */
const CHAIN_MAX = 16;

function rrsetKey(owner: number, rrtype: number, bailiwick: number, rows: ArrayLike<number>, n: number): string {
  let key = `${owner} ${rrtype} ${bailiwick}`;
  for (let k = 0; k < n; k++) key += ` ${rows[k]}`;
  return key;
}

/**
 * The columns the shard writer reads (RrsetTable.data()): typed arrays only,
 * which can be posted to a worker thread (moved, not copied), which rebuilds
 * a table from them to write the shard there (the live receiver,
 * src/ingest/live/).
 */
export interface RrsetTableData {
  nameBytes: Uint8Array<ArrayBuffer>;
  nameStarts: Uint32Array<ArrayBuffer>;
  bailiwickBytes: Uint8Array<ArrayBuffer>;
  bailiwickStarts: Uint32Array<ArrayBuffer>;
  rdataTextBytes: Uint8Array<ArrayBuffer>;
  rdataTextStarts: Uint32Array<ArrayBuffer>;
  rdataType: Uint16Array<ArrayBuffer>;
  wireBytes: Uint8Array<ArrayBuffer>;
  wireStarts: Uint32Array<ArrayBuffer>;
  owner: Uint32Array<ArrayBuffer>;
  rrtype: Uint16Array<ArrayBuffer>;
  bailiwick: Uint32Array<ArrayBuffer>;
  rdataStarts: Uint32Array<ArrayBuffer>;
  rdataRows: Uint32Array<ArrayBuffer>;
  count: Float64Array<ArrayBuffer>;
  timeFirst: Uint32Array<ArrayBuffer>;
  timeLast: Uint32Array<ArrayBuffer>;
  zoneTimeFirst: Uint32Array<ArrayBuffer>;
  zoneTimeLast: Uint32Array<ArrayBuffer>;
}


/**
 * Distinct RRsets in columns. Row i of the RRset columns is one aggregated
 * RRset; its records are rdataRows[rdataStarts[i] .. rdataStarts[i+1]),
 * indexes into the rdata columns, in canonical (wire) order.
 */
export class RrsetTable {
  /** Observations added, before aggregation. */
  observations = 0;

  // Interned strings (interned-blob.ts). Owner names and bailiwicks are kept
  // apart: every owner name owns at least one RRset, which the writer relies on.
  readonly names: InternedBlob;
  readonly bailiwicks: InternedBlob;

  // Unique rdata: (rrtype, presentation text), which within one rrtype is
  // one-to-one with the wire form; the rrtype is the text's tag. Wire bytes
  // go to one arena.
  readonly rdataText: InternedBlob;
  readonly wireBytes: Column<Uint8Array<ArrayBuffer>>;
  readonly wireStarts: Column<Uint32Array<ArrayBuffer>>;

  // RRsets. Each owner's RRsets form a chain (ownerHead -> nextOfOwner), so
  // finding the row an observation folds into walks the few RRsets of one
  // name instead of building and hashing a string key per observation (that
  // key and its Map were a third of aggregation time).
  // A name seen with many rdata sets (fast flux, round-robin pools in a pcap)
  // would make that walk quadratic, so past CHAIN_MAX RRsets an owner's
  // RRsets are also found by string key.
  private readonly ownerHead = new Column(Int32Array);
  private readonly ownerRrsets = new Column(Uint32Array);
  private readonly nextOfOwner = new Column(Int32Array);
  private readonly busyKeys = new Map<string, number>();
  readonly owner: Column<Uint32Array<ArrayBuffer>>;
  readonly rrtype: Column<Uint16Array<ArrayBuffer>>;
  readonly bailiwick: Column<Uint32Array<ArrayBuffer>>;
  readonly rdataStarts: Column<Uint32Array<ArrayBuffer>>;
  readonly rdataRows: Column<Uint32Array<ArrayBuffer>>;
  readonly count: Column<Float64Array<ArrayBuffer>>;
  readonly timeFirst: Column<Uint32Array<ArrayBuffer>>;
  readonly timeLast: Column<Uint32Array<ArrayBuffer>>;
  readonly zoneTimeFirst: Column<Uint32Array<ArrayBuffer>>;
  readonly zoneTimeLast: Column<Uint32Array<ArrayBuffer>>;

  /** An RRset's rdata ids while it is added: canonicalised in place. */
  private rows = new Uint32Array(64);
  private rowCount = 0;
  /** Scratch for appendOwnerReversed. */
  private reversed = new Uint8Array(256);
  private readonly scratch = noSighting();

  /** Set for a table rebuilt from data(): the writer may read it, but it has no index to add to. */
  private readonly readOnly: boolean;

  /** An empty table, or (`data`) the RRsets another table held, for the shard writer only. */
  constructor(data?: RrsetTableData) {
    this.readOnly = data !== undefined;
    if (data === undefined) {
      this.names = new InternedBlob();
      this.bailiwicks = new InternedBlob();
      this.rdataText = new InternedBlob();
      this.wireBytes = new Column(Uint8Array, 1 << 16);
      this.wireStarts = new Column(Uint32Array);
      this.owner = new Column(Uint32Array);
      this.rrtype = new Column(Uint16Array);
      this.bailiwick = new Column(Uint32Array);
      this.rdataStarts = new Column(Uint32Array);
      this.rdataRows = new Column(Uint32Array);
      this.count = new Column(Float64Array);
      this.timeFirst = new Column(Uint32Array);
      this.timeLast = new Column(Uint32Array);
      this.zoneTimeFirst = new Column(Uint32Array);
      this.zoneTimeLast = new Column(Uint32Array);
      this.rdataStarts.push(0);
      this.wireStarts.push(0);
      return;
    }
    this.names = new InternedBlob({
      bytes: data.nameBytes, offsets: data.nameStarts, tags: new Uint16Array(data.nameStarts.length),
    });
    this.bailiwicks = new InternedBlob({
      bytes: data.bailiwickBytes, offsets: data.bailiwickStarts, tags: new Uint16Array(data.bailiwickStarts.length),
    });
    this.rdataText = new InternedBlob({
      bytes: data.rdataTextBytes, offsets: data.rdataTextStarts, tags: data.rdataType,
    });
    this.wireBytes = Column.of(Uint8Array, data.wireBytes);
    this.wireStarts = Column.of(Uint32Array, data.wireStarts);
    this.owner = Column.of(Uint32Array, data.owner);
    this.rrtype = Column.of(Uint16Array, data.rrtype);
    this.bailiwick = Column.of(Uint32Array, data.bailiwick);
    this.rdataStarts = Column.of(Uint32Array, data.rdataStarts);
    this.rdataRows = Column.of(Uint32Array, data.rdataRows);
    this.count = Column.of(Float64Array, data.count);
    this.timeFirst = Column.of(Uint32Array, data.timeFirst);
    this.timeLast = Column.of(Uint32Array, data.timeLast);
    this.zoneTimeFirst = Column.of(Uint32Array, data.zoneTimeFirst);
    this.zoneTimeLast = Column.of(Uint32Array, data.zoneTimeLast);
  }

  /**
   * The columns the writer reads, as views of this table's memory. Posting
   * them with their buffers in the transfer list moves that memory to the
   * other thread (dataBuffers): this table is then unusable.
   */
  data(): RrsetTableData {
    const names = this.names.data(), bailiwicks = this.bailiwicks.data(), texts = this.rdataText.data();
    return {
      nameBytes: names.bytes, nameStarts: names.offsets, bailiwickBytes: bailiwicks.bytes, bailiwickStarts: bailiwicks.offsets,
      rdataTextBytes: texts.bytes, rdataTextStarts: texts.offsets, rdataType: texts.tags,
      wireBytes: this.wireBytes.view(), wireStarts: this.wireStarts.view(),
      owner: this.owner.view(), rrtype: this.rrtype.view(), bailiwick: this.bailiwick.view(),
      rdataStarts: this.rdataStarts.view(), rdataRows: this.rdataRows.view(), count: this.count.view(),
      timeFirst: this.timeFirst.view(), timeLast: this.timeLast.view(),
      zoneTimeFirst: this.zoneTimeFirst.view(), zoneTimeLast: this.zoneTimeLast.view(),
    };
  }

  /** Distinct RRsets held. */
  get size(): number {
    return this.owner.length;
  }

  /** Distinct rdata held. */
  get rdataCount(): number {
    return this.rdataText.length;
  }

  /** The rrtype of rdata `id`. */
  rdataType(id: number): number {
    return this.rdataText.tag(id);
  }

  /**
   * Bytes of memory the table's arrays hold (their capacity, slack
   * included): what --memory-rrsets bounds, per RRset held.
   */
  get allocatedBytes(): number {
    let n = this.names.allocatedBytes + this.bailiwicks.allocatedBytes + this.rdataText.allocatedBytes;
    for (const c of [this.wireBytes, this.wireStarts, this.ownerHead, this.ownerRrsets, this.nextOfOwner, this.owner, this.rrtype,
      this.bailiwick, this.rdataStarts, this.rdataRows, this.count, this.timeFirst, this.timeLast, this.zoneTimeFirst,
      this.zoneTimeLast]) n += c.allocatedBytes;
    return n;
  }

  add(o: Observation): void {
    if (this.readOnly) throw new Error('RrsetTable: a table rebuilt from data() is read-only');
    this.observations++;
    const rdata = o.rdata;
    if (rdata.length > this.rows.length) this.rows = new Uint32Array(rdata.length * 2);
    const rows = this.rows;
    const texts = this.rdataText;
    for (let k = 0; k < rdata.length; k++) {
      const rd = rdata[k]!;
      const before = texts.length;
      const id = texts.intern(rd.text, o.rrtype);
      if (id === before) {
        this.wireBytes.pushAll(rd.wire);
        this.wireStarts.push(this.wireBytes.length);
      }
      rows[k] = id;
    }
    this.rowCount = rdata.length > 1 ? this.canonicalize(rdata.length) : rdata.length;
    this.addRow(this.names.intern(o.rrname, 0), o.rrtype, this.bailiwicks.intern(o.bailiwick, 0), o);
  }

  // The merge's way in (shard-merge.ts): the parts of an RRset read from a
  // shard's bytes, interned without making strings, then the RRset itself.

  /**
   * The owner id of a name given as bytes with its labels reversed (a
   * shard's owners column), from a caller that gives each owner once, in
   * ascending order (a merge): the name is added without looking for it,
   * and the table takes no owner by name (add()) from then on.
   */
  appendOwnerReversed(bytes: Uint8Array, from: number, to: number): number {
    if (this.reversed.length < to - from + 2) this.reversed = new Uint8Array((to - from + 2) * 2);
    const n = reverseNameBytes(bytes, from, to, this.reversed, 0);
    return this.names.appendBytes(this.reversed, 0, n, 0);
  }

  /** The bailiwick id of a name given as bytes. */
  internBailiwick(bytes: Uint8Array, from: number, to: number): number {
    return this.bailiwicks.internBytes(bytes, from, to, 0);
  }

  /** The rdata id of (rrtype, text bytes [textFrom, textTo)), whose wire form is wire[wireFrom, wireTo). */
  internRdata(rrtype: number, text: Uint8Array, textFrom: number, textTo: number, wire: Uint8Array, wireFrom: number,
    wireTo: number): number {
    const before = this.rdataText.length;
    const id = this.rdataText.internBytes(text, textFrom, textTo, rrtype);
    if (id === before) {
      this.wireBytes.pushAll(wire.subarray(wireFrom, wireTo));
      this.wireStarts.push(this.wireBytes.length);
    }
    return id;
  }

  /** Room for the n rdata ids of the RRset that addStaged adds next: the caller fills it. */
  stagedRows(n: number): Uint32Array {
    if (n > this.rows.length) this.rows = new Uint32Array(n * 2);
    this.rowCount = n;
    return this.rows;
  }

  /** Adds (or folds) the RRset of owner, rrtype, bailiwick and the staged rdata ids, with sighting `s`. */
  addStaged(owner: number, rrtype: number, bailiwick: number, s: Sighting): void {
    if (this.readOnly) throw new Error('RrsetTable: a table rebuilt from data() is read-only');
    this.observations++;
    if (this.rowCount > 1) this.rowCount = this.canonicalize(this.rowCount);
    this.addRow(owner, rrtype, bailiwick, s);
  }

  /** Folds the RRset (owner, rrtype, bailiwick, this.rows) with sighting `s` into its row, or adds it. */
  private addRow(owner: number, rrtype: number, bailiwick: number, s: Sighting): void {
    if (owner === this.ownerHead.length) {
      this.ownerHead.push(-1);
      this.ownerRrsets.push(0);
    }
    const have = this.find(owner, rrtype, bailiwick);
    if (have >= 0) {
      this.setSighting(have, addSighting(this.sightingOf(have), s));
      return;
    }
    this.link(owner, this.owner.length, rrtype, bailiwick);
    this.owner.push(owner);
    this.rrtype.push(rrtype);
    this.bailiwick.push(bailiwick);
    const rows = this.rows;
    for (let k = 0; k < this.rowCount; k++) this.rdataRows.push(rows[k]!);
    this.rdataStarts.push(this.rdataRows.length);
    this.count.push(s.count);
    this.timeFirst.push(s.timeFirst);
    this.timeLast.push(s.timeLast);
    this.zoneTimeFirst.push(s.zoneTimeFirst);
    this.zoneTimeLast.push(s.zoneTimeLast);
  }

  /** The sighting columns of row i, in a scratch object (valid until the next call). */
  private sightingOf(i: number): Sighting {
    const s = this.scratch;
    s.count = this.count.get(i);
    s.timeFirst = this.timeFirst.get(i);
    s.timeLast = this.timeLast.get(i);
    s.zoneTimeFirst = this.zoneTimeFirst.get(i);
    s.zoneTimeLast = this.zoneTimeLast.get(i);
    return s;
  }

  private setSighting(i: number, s: Sighting): void {
    this.count.set(i, s.count);
    this.timeFirst.set(i, s.timeFirst);
    this.timeLast.set(i, s.timeLast);
    this.zoneTimeFirst.set(i, s.zoneTimeFirst);
    this.zoneTimeLast.set(i, s.zoneTimeLast);
  }

  /** The row of the RRset (owner, rrtype, bailiwick, this.rows in canonical order), or -1. */
  private find(owner: number, rrtype: number, bailiwick: number): number {
    const rows = this.rows, n = this.rowCount;
    if (this.ownerRrsets.get(owner) > CHAIN_MAX) return this.busyKeys.get(rrsetKey(owner, rrtype, bailiwick, rows, n)) ?? -1;
    for (let i = this.ownerHead.get(owner); i >= 0; i = this.nextOfOwner.get(i)) {
      if (this.rrtype.get(i) !== rrtype || this.bailiwick.get(i) !== bailiwick) continue;
      const from = this.rdataStarts.get(i);
      if (this.rdataStarts.get(i + 1) - from !== n) continue;
      let k = 0;
      while (k < n && this.rdataRows.get(from + k) === rows[k]) k++;
      if (k === n) return i;
    }
    return -1;
  }

  /** Adds row `row` (about to be pushed) to its owner's chain, and to busyKeys once the owner is busy. */
  private link(owner: number, row: number, rrtype: number, bailiwick: number): void {
    this.nextOfOwner.push(this.ownerHead.get(owner));
    this.ownerHead.set(owner, row);
    const n = this.ownerRrsets.get(owner) + 1;
    this.ownerRrsets.set(owner, n);
    if (n <= CHAIN_MAX) return;
    this.busyKeys.set(rrsetKey(owner, rrtype, bailiwick, this.rows, this.rowCount), row);
    if (n > CHAIN_MAX + 1) return;
    // The owner just became busy: key the RRsets already in its chain.
    for (let i = this.nextOfOwner.get(row); i >= 0; i = this.nextOfOwner.get(i)) {
      const from = this.rdataStarts.get(i);
      const ids = this.rdataRows.view().subarray(from, this.rdataStarts.get(i + 1));
      this.busyKeys.set(rrsetKey(owner, this.rrtype.get(i), this.bailiwick.get(i), ids, ids.length), i);
    }
  }

  /** The wire form of rdata `id` (a view into the arena, valid until the next add). */
  wire(id: number): Uint8Array {
    return this.wireBytes.view().subarray(this.wireStarts.get(id), this.wireStarts.get(id + 1));
  }

  /** Unsigned byte order of two rdata's wire forms, a shorter prefix first. */
  compareWire(a: number, b: number): number {
    const bytes = this.wireBytes.view();
    let i = this.wireStarts.get(a);
    let j = this.wireStarts.get(b);
    const endA = this.wireStarts.get(a + 1);
    const endB = this.wireStarts.get(b + 1);
    for (; i < endA && j < endB; i++, j++) {
      if (bytes[i] !== bytes[j]) return bytes[i]! - bytes[j]!;
    }
    return (endA - i) - (endB - j);
  }

  /** RRset `i` as an Observation (for tests and tools; the writer reads the columns). */
  rrset(i: number): Observation {
    const rdata: Rdata[] = [];
    for (let j = this.rdataStarts.get(i); j < this.rdataStarts.get(i + 1); j++) {
      const id = this.rdataRows.get(j);
      rdata.push({ text: this.rdataText.text(id), wire: this.wire(id).slice() });
    }
    return {
      rrname: this.names.text(this.owner.get(i)), rrtype: this.rrtype.get(i), bailiwick: this.bailiwicks.text(this.bailiwick.get(i)),
      rdata, count: this.count.get(i), timeFirst: this.timeFirst.get(i), timeLast: this.timeLast.get(i),
      zoneTimeFirst: this.zoneTimeFirst.get(i), zoneTimeLast: this.zoneTimeLast.get(i),
    };
  }

  /**
   * Sorts the first n rdata ids of this.rows by wire form and drops
   * duplicates, in place (insertion: an RRset holds a few records; a large
   * one is sorted by the engine); returns how many are left.
   */
  private canonicalize(n: number): number {
    const rows = this.rows;
    if (n <= 16) {
      for (let i = 1; i < n; i++) {
        const v = rows[i]!;
        let j = i - 1;
        for (; j >= 0 && this.compareWire(rows[j]!, v) > 0; j--) rows[j + 1] = rows[j]!;
        rows[j + 1] = v;
      }
    } else {
      const sorted = Array.from(rows.subarray(0, n)).sort((a, b) => this.compareWire(a, b));
      rows.set(sorted);
    }
    let w = 1;
    for (let r = 1; r < n; r++) if (rows[r] !== rows[w - 1]) rows[w++] = rows[r]!;
    return w;
  }
}

/** The distinct buffers under a table's data(), for a postMessage transfer list. */
export function dataBuffers(d: RrsetTableData): ArrayBuffer[] {
  const out = new Set<ArrayBuffer>();
  for (const v of Object.values(d)) if (ArrayBuffer.isView(v)) out.add(v.buffer as ArrayBuffer);
  return [...out];
}
