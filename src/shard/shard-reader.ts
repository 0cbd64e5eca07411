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
import { SHARD_HEADER_BYTES, verifyShard } from './format.js';
import { Blob, Shard, TrigramIndex } from './generated/shard_generated.js';
import type { BlobColumns } from './blob.js';
import { mapFile } from './mapped-file.js';
import type { TrigramIndexParts } from './trigram-index.js';

/** A shard as it crosses to a worker thread: the mapping is shared, never copied. */
export interface ShardHandle {
  name: string;
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

export class ShardReader {
  readonly name: string;
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

  private constructor(name: string, buffer: SharedArrayBuffer, body: Uint8Array) {
    this.name = name;
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

  /** Maps and fully verifies a shard file (main thread). */
  static open(file: string): ShardReader {
    const buffer = mapFile(file);
    const body = verifyShard(file, new Uint8Array(buffer));
    return new ShardReader(path.basename(file), buffer, body);
  }

  /** Views a shard already verified by the main thread (workers). */
  static attach(name: string, buffer: SharedArrayBuffer): ShardReader {
    return new ShardReader(name, buffer, new Uint8Array(buffer, SHARD_HEADER_BYTES));
  }

  get byteLength(): number {
    return this.buffer.byteLength;
  }

  /** Record i of a blob as a string (latin1 is exact: records are ASCII). */
  static record(b: BlobColumns, i: number): string {
    return b.blob.toString('latin1', b.offsets[i]!, b.offsets[i + 1]! - 1);
  }

  rdataWire(row: number): Uint8Array {
    return this.rdata.wire.subarray(this.rdata.wireOffsets[row]!, this.rdata.wireOffsets[row + 1]!);
  }
}

export function openShard(file: string): ShardReader {
  return ShardReader.open(file);
}
