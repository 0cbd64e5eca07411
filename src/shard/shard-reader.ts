// ShardReader: a verified, memory-mapped shard and zero-copy views of its
// columns.
//
// The main thread opens each shard once (map + full checksum, see format.ts)
// and posts the SharedArrayBuffer to the workers, which attach() to it
// without re-verifying. Views are typed arrays over the mapping: nothing is
// copied, and reading a column element costs what reading an array does.

import * as flatbuffers from 'flatbuffers';
import path from 'node:path';
import { ShardCorruptError } from '../errors/catalogue.js';
import { checkHeader, SHARD_HEADER_BYTES, verifyShard } from './format.js';
import { Blob, Shard, TrigramIndex } from './generated/shard_generated.js';
import { reverseName, isOneLabel } from '../dns/name.js';
import { lowerBound, partitionPoint, runOf } from '../lib/lower-bound.js';
import type { NameMatch } from '../model/name-match.js';
import type { Sighting } from '../model/sighting.js';
import { blobRecord, findExact, prefixRange, type BlobColumns } from './blob.js';
import { mapFile } from './mapped-file.js';
import type { TrigramIndexParts } from './trigram-index.js';

/** A shard as it crosses to a worker thread: the mapping is shared, never copied. */
export interface ShardHandle {
  name: string;
  /** The mapped file's identity (mapped-file.ts): a file replaced under the same name is another shard. */
  identity: string;
  buffer: SharedArrayBuffer;
}

export type { BlobColumns } from './blob.js';

export interface FlexColumns extends BlobColumns {
  entryStarts: Uint32Array;
  entryType: Uint16Array;
  entryFirst: Uint32Array;
  entryLast: Uint32Array;
  /** FlexNames: the RRsets.owners row of each name. FlexRdata: the Rdata row of each entry. */
  link: Uint32Array;
  trigrams: TrigramIndexParts;
}

const EMPTY_U8 = new Uint8Array(0);
const EMPTY_U16 = new Uint16Array(0);
const EMPTY_U32 = new Uint32Array(0);
const EMPTY_F64 = new Float64Array(0);

function blobColumns(b: Blob | null): BlobColumns {
  const bytes = b?.bytesArray() ?? EMPTY_U8;
  return {
    blob: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength),
    offsets: b?.offsetsArray() ?? Uint32Array.of(0),
  };
}

function trigramParts(t: TrigramIndex | null): TrigramIndexParts {
  return {
    keys: t?.keysArray() ?? EMPTY_U32,
    starts: t?.startsArray() ?? Uint32Array.of(0),
    postings: t?.postingsArray() ?? EMPTY_U8,
  };
}

export class ShardReader implements ShardHandle {
  readonly name: string;
  readonly identity: string;
  readonly buffer: SharedArrayBuffer;
  readonly root: Shard;

  readonly rrsetCount: number;
  readonly timeMin: number;
  readonly timeMax: number;

  readonly flexNames: FlexColumns;
  readonly flexRdata: FlexColumns;
  readonly owners: BlobColumns;
  readonly ownerStarts: Uint32Array;
  readonly bailiwicks: BlobColumns;
  readonly rrsets: {
    rrtype: Uint16Array; bailiwick: Uint32Array; count: Float64Array;
    timeFirst: Uint32Array; timeLast: Uint32Array; zoneTimeFirst: Uint32Array; zoneTimeLast: Uint32Array;
    rdataStarts: Uint32Array; rdataRows: Uint32Array;
  };
  readonly rdata: {
    rrtype: Uint16Array; text: BlobColumns; wire: Uint8Array; wireOffsets: Uint32Array;
    rrsetStarts: Uint32Array; rrsetRows: Uint32Array;
  };
  readonly index: {
    nameKeys: BlobColumns; nameStarts: Uint32Array; nameRdata: Uint32Array; nameFwdOrder: Uint32Array;
    ip4Keys: Uint32Array; ip4Rdata: Uint32Array; ip6Keys: Uint8Array; ip6Rdata: Uint32Array; wireOrder: Uint32Array;
  };

  private constructor({ name, identity, buffer }: ShardHandle, body: Uint8Array) {
    this.name = name;
    this.identity = identity;
    this.buffer = buffer;
    const bb = new flatbuffers.ByteBuffer(body);
    if (!Shard.bufferHasIdentifier(bb)) throw new ShardCorruptError(name, 'FlatBuffer identifier is not RRS1');
    this.root = Shard.getRootAsShard(bb);
    const r = this.root;
    this.rrsetCount = r.rrsetCount();
    this.timeMin = r.timeMin();
    this.timeMax = r.timeMax();
    this.bailiwicks = blobColumns(r.bailiwicks());

    const fn = r.flexNames();
    this.flexNames = {
      ...blobColumns(fn?.names() ?? null),
      entryStarts: fn?.entryStartsArray() ?? Uint32Array.of(0),
      entryType: fn?.entryTypeArray() ?? EMPTY_U16,
      entryFirst: fn?.entryFirstArray() ?? EMPTY_U32,
      entryLast: fn?.entryLastArray() ?? EMPTY_U32,
      link: fn?.ownerArray() ?? EMPTY_U32,
      trigrams: trigramParts(fn?.trigrams() ?? null),
    };
    const fr = r.flexRdata();
    this.flexRdata = {
      ...blobColumns(fr?.values() ?? null),
      entryStarts: fr?.entryStartsArray() ?? Uint32Array.of(0),
      entryType: fr?.entryTypeArray() ?? EMPTY_U16,
      entryFirst: fr?.entryFirstArray() ?? EMPTY_U32,
      entryLast: fr?.entryLastArray() ?? EMPTY_U32,
      link: fr?.entryRdataArray() ?? EMPTY_U32,
      trigrams: trigramParts(fr?.trigrams() ?? null),
    };
    const rs = r.rrsets();
    this.owners = blobColumns(rs?.owners() ?? null);
    this.ownerStarts = rs?.ownerStartsArray() ?? Uint32Array.of(0);
    this.rrsets = {
      rrtype: rs?.rrtypeArray() ?? EMPTY_U16,
      bailiwick: rs?.bailiwickArray() ?? EMPTY_U32,
      count: rs?.countArray() ?? EMPTY_F64,
      timeFirst: rs?.timeFirstArray() ?? EMPTY_U32,
      timeLast: rs?.timeLastArray() ?? EMPTY_U32,
      zoneTimeFirst: rs?.zoneTimeFirstArray() ?? EMPTY_U32,
      zoneTimeLast: rs?.zoneTimeLastArray() ?? EMPTY_U32,
      rdataStarts: rs?.rdataStartsArray() ?? Uint32Array.of(0),
      rdataRows: rs?.rdataRowsArray() ?? EMPTY_U32,
    };
    const rd = r.rdata();
    this.rdata = {
      rrtype: rd?.rrtypeArray() ?? EMPTY_U16,
      text: blobColumns(rd?.text() ?? null),
      wire: rd?.wireArray() ?? EMPTY_U8,
      wireOffsets: rd?.wireOffsetsArray() ?? Uint32Array.of(0),
      rrsetStarts: rd?.rrsetStartsArray() ?? Uint32Array.of(0),
      rrsetRows: rd?.rrsetRowsArray() ?? EMPTY_U32,
    };
    const ix = r.rdataIndex();
    this.index = {
      nameKeys: blobColumns(ix?.nameKeys() ?? null),
      nameStarts: ix?.nameStartsArray() ?? Uint32Array.of(0),
      nameRdata: ix?.nameRdataArray() ?? EMPTY_U32,
      nameFwdOrder: ix?.nameFwdOrderArray() ?? EMPTY_U32,
      ip4Keys: ix?.ip4KeysArray() ?? EMPTY_U32,
      ip4Rdata: ix?.ip4RdataArray() ?? EMPTY_U32,
      ip6Keys: ix?.ip6KeysArray() ?? EMPTY_U8,
      ip6Rdata: ix?.ip6RdataArray() ?? EMPTY_U32,
      wireOrder: ix?.wireOrderArray() ?? EMPTY_U32,
    };
    if (this.rrsets.rrtype.length !== this.rrsetCount || this.ownerStarts.length !== this.owners.offsets.length) {
      throw new ShardCorruptError(name, 'column lengths disagree with the table of contents');
    }
  }

  /**
   * Maps a shard file and checks its header, but not its body: one page is
   * read, whatever the file's size. The caller verifies the body
   * (shard/scrub.ts, through a descriptor), or trusts the record that it was
   * (shard/verified.ts), before it attaches: the table of contents is read
   * from the body, and an unverified one may say anything.
   */
  static map(file: string): ShardHandle {
    const { buffer, identity } = mapFile(file);
    const bytes = new Uint8Array(buffer);
    checkHeader(file, bytes, bytes.byteLength);
    return { name: path.basename(file), identity, buffer };
  }

  /** Maps and fully verifies a shard file, through the mapping (every page is read into it). */
  static open(file: string): ShardReader {
    const { buffer, identity } = mapFile(file);
    const body = verifyShard(file, new Uint8Array(buffer));
    return new ShardReader({ name: path.basename(file), identity, buffer }, body);
  }

  /** Views a shard another thread has verified. */
  static attach(h: ShardHandle): ShardReader {
    return new ShardReader(h, new Uint8Array(h.buffer, SHARD_HEADER_BYTES));
  }

  /** What crosses to another thread: plain fields only (a ShardReader's views would be cloned, not shared). */
  handle(): ShardHandle {
    return { name: this.name, identity: this.identity, buffer: this.buffer };
  }

  get byteLength(): number {
    return this.buffer.byteLength;
  }

  rdataWire(row: number): Uint8Array {
    return this.rdata.wire.subarray(this.rdata.wireOffsets[row], this.rdata.wireOffsets[row + 1]);
  }

  // -------------------------------------------------------------------------
  // Queries. Standard search reads a shard only through these, so that the
  // layout of the indexes stays in this file; a second data backend answers
  // the same questions its own way. Hits come in index order, each with the
  // key it sorts by, so that several shards' hits merge into one order.

  /**
   * Owner rows whose names match, in key order, each with its key: the
   * reversed owner name for exact and left-hand matches, the forward name
   * for right-hand ones (`starts`, `one-more`).
   */
  *ownersMatching(m: NameMatch): Generator<readonly [owner: number, key: string]> {
    if (m.mode === 'starts' || m.mode === 'one-more') {
      const fn = this.flexNames;
      const [from, to] = prefixRange(fn, m.prefix);
      for (let k = from; k < to; k++) {
        const fwd = blobRecord(fn, k);
        if (m.mode === 'one-more' && !isOneLabel(fwd.slice(m.prefix.length))) continue;
        yield [fn.link[k]!, fwd];
      }
      return;
    }
    yield* reversedMatches(this.owners, m);
  }

  /** RRsets of owner row o are rows [rrsetsStart(o), rrsetsStart(o + 1)). */
  rrsetsStart(o: number): number {
    return this.ownerStarts[o]!;
  }

  /** Forward owner name of RRset row i. */
  ownerName(i: number): string {
    return reverseName(this.reversedOwner(i));
  }

  /** Reversed owner name of RRset row i (the first part of its sort key). */
  reversedOwner(i: number): string {
    return blobRecord(this.owners, this.ownerOf(i));
  }

  /** The owner row of RRset row i: its reversed name is record ownerOf(i) of `owners`. */
  ownerOf(i: number): number {
    return runOf(this.ownerStarts, i);
  }

  rrtype(i: number): number {
    return this.rrsets.rrtype[i]!;
  }

  /** Bailiwick of RRset row i; '' when unknown. */
  bailiwick(i: number): string {
    return blobRecord(this.bailiwicks, this.rrsets.bailiwick[i]!);
  }

  /** RRset row i's bailiwick is record bailiwickOf(i) of `bailiwicks` (empty when unknown). */
  bailiwickOf(i: number): number {
    return this.rrsets.bailiwick[i]!;
  }

  /** The id RRsets carry for this bailiwick, or -1 when none has it. */
  bailiwickId(name: string): number {
    return findExact(this.bailiwicks, name);
  }

  hasBailiwick(i: number, id: number): boolean {
    return this.rrsets.bailiwick[i] === id;
  }

  /** Count and times of RRset row i, into `into`. */
  sighting(i: number, into: Sighting): Sighting {
    const rs = this.rrsets;
    into.count = rs.count[i]!;
    into.timeFirst = rs.timeFirst[i]!;
    into.timeLast = rs.timeLast[i]!;
    into.zoneTimeFirst = rs.zoneTimeFirst[i]!;
    into.zoneTimeLast = rs.zoneTimeLast[i]!;
    return into;
  }

  /** The record of `rdata.text` that is RRset row i's j-th, for j in [0, rdataCount(i)), in the stored order. */
  rdataRow(i: number, j: number): number {
    return this.rrsets.rdataRows[this.rrsets.rdataStarts[i]! + j]!;
  }

  /** Records RRset row i has. */
  rdataCount(i: number): number {
    return this.rrsets.rdataStarts[i + 1]! - this.rrsets.rdataStarts[i]!;
  }

  /** Presentation texts of RRset row i's records, in the stored order. */
  rdataTexts(i: number): string[] {
    const rs = this.rrsets;
    const out: string[] = [];
    for (let j = rs.rdataStarts[i]!; j < rs.rdataStarts[i + 1]!; j++) out.push(blobRecord(this.rdata.text, rs.rdataRows[j]!));
    return out;
  }

  /** Rdata rows holding an address in [low, high] (4 or 16 bytes each), in address order, keyed by the address in hex. */
  *rdataByAddress(family: 4 | 6, low: Uint8Array, high: Uint8Array): Generator<readonly [rdata: number, key: string]> {
    const ix = this.index;
    if (family === 4) {
      const lo = Buffer.from(low).readUInt32BE(0);
      const hi = Buffer.from(high).readUInt32BE(0);
      for (let k = lowerBound(ix.ip4Keys, lo); k < ix.ip4Keys.length && ix.ip4Keys[k]! <= hi; k++) {
        yield [ix.ip4Rdata[k]!, ix.ip4Keys[k]!.toString(16).padStart(8, '0')];
      }
      return;
    }
    const n = ix.ip6Rdata.length;
    const key = (k: number) => Buffer.from(ix.ip6Keys.buffer, ix.ip6Keys.byteOffset + k * 16, 16);
    for (let k = partitionPoint(0, n, (m) => Buffer.compare(key(m), low) < 0); k < n && Buffer.compare(key(k), high) <= 0; k++) {
      yield [ix.ip6Rdata[k]!, key(k).toString('hex')];
    }
  }

  /** Rdata rows whose wire form is `wire` (one per rrtype that has it), keyed by the wire form in hex. */
  *rdataByWire(wire: Uint8Array): Generator<readonly [rdata: number, key: string]> {
    const want = Buffer.from(wire);
    const order = this.index.wireOrder;
    const wireOf = (k: number) => Buffer.from(this.rdataWire(order[k]!));
    const hex = want.toString('hex');
    for (let k = partitionPoint(0, order.length, (m) => Buffer.compare(wireOf(m), want) < 0);
      k < order.length && Buffer.compare(wireOf(k), want) === 0; k++) yield [order[k]!, hex];
  }

  /**
   * Rdata rows whose rdata holds a name (NS, CNAME, MX, ...) that matches,
   * keyed as ownersMatching keys names; the rows of one name come ordered by
   * rrtype, then text.
   */
  *rdataByName(m: NameMatch): Generator<readonly [rdata: number, key: string]> {
    const ix = this.index;
    if (m.mode === 'starts' || m.mode === 'one-more') {
      const order = ix.nameFwdOrder;
      const fwdOf = (j: number) => reverseName(blobRecord(ix.nameKeys, order[j]!));
      for (let j = partitionPoint(0, order.length, (k) => fwdOf(k) < m.prefix); j < order.length; j++) {
        const fwd = fwdOf(j);
        if (!fwd.startsWith(m.prefix)) break;
        if (m.mode === 'one-more' && !isOneLabel(fwd.slice(m.prefix.length))) continue;
        yield* this.rdataOfName(order[j]!, fwd);
      }
      return;
    }
    for (const [k, rev] of reversedMatches(ix.nameKeys, m)) yield* this.rdataOfName(k, rev);
  }

  /** The rdata rows of name key k, ordered by rrtype, then text. */
  private *rdataOfName(k: number, key: string): Generator<readonly [rdata: number, key: string]> {
    const ix = this.index;
    const rows = Array.from(ix.nameRdata.subarray(ix.nameStarts[k], ix.nameStarts[k + 1]));
    rows.sort((a, b) => this.rdataType(a) - this.rdataType(b) || (this.rdataText(a) < this.rdataText(b) ? -1 : 1));
    for (const r of rows) yield [r, key];
  }

  rdataType(r: number): number {
    return this.rdata.rrtype[r]!;
  }

  rdataText(r: number): string {
    return blobRecord(this.rdata.text, r);
  }

  /** RRset rows holding rdata row r are rdataRrset(j) for j in [rdataRrsetsStart(r), rdataRrsetsStart(r + 1)). */
  rdataRrsetsStart(r: number): number {
    return this.rdata.rrsetStarts[r]!;
  }

  rdataRrset(j: number): number {
    return this.rdata.rrsetRows[j]!;
  }
}

/** Records of a reversed-name blob matching an exact or left-hand name match, with their text. */
function* reversedMatches(b: BlobColumns, m: NameMatch): Generator<readonly [number, string]> {
  if (m.mode === 'exact') {
    // The common lookup: one binary search, no walk.
    const k = findExact(b, reverseName(m.name));
    if (k >= 0) yield [k, blobRecord(b, k)];
    return;
  }
  if (m.mode !== 'under' && m.mode !== 'one-under') return;
  const p = m.name === '.' ? '' : reverseName(m.name);
  const [from, to] = prefixRange(b, p);
  for (let k = from; k < to; k++) {
    const rev = blobRecord(b, k);
    if (m.mode === 'one-under' && !isOneLabel(rev.slice(p.length))) continue;
    yield [k, rev];
  }
}

export function openShard(file: string): ShardReader {
  return ShardReader.open(file);
}
