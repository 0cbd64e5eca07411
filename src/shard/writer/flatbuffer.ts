// The last step of the writer: the shard's parts, computed by the other
// writer modules, laid out as the FlatBuffer of schema/shard.fbs.
//
// The order in which vectors and tables are added decides every byte of the
// output (FlatBuffers builds back to front), so it is kept as it is:
// changing it changes no meaning but every shard's bytes and hash
// (test/unit/shard/shard-bytes.test.ts).

import assert from 'node:assert/strict';
import type * as flatbuffers from 'flatbuffers';
import { LIMITS } from '../../config/limits.js';
import { SHARD_FORMAT_VERSION } from '../format.js';
import {
  Blob, FlexNames, FlexRdata, Rdata as FbRdata, RdataIndex, Rrsets, Shard, TrigramIndex,
} from '../generated/shard_generated.js';
import type { TrigramIndexParts } from '../trigram-index.js';
import type { BlobParts } from './blobs.js';
import { PieceBuilder, type FlatBufferPieces } from './piece-builder.js';
import type { FlexNamesParts, FlexRdataParts } from './flex.js';
import type { Csr, RdataIndexParts, RdataParts } from './rdata.js';
import type { RrsetColumns, ShardTotals } from './rrsets.js';

assert.ok(new Uint8Array(new Uint16Array([1]).buffer)[0] === 1, 'shards are little-endian; typed arrays are copied raw');

/** Everything a shard holds, as computed by the writer's phases. */
export interface ShardParts {
  /** Reversed owner names, sorted; the RRsets of owner k are rows ownerStarts[k] .. ownerStarts[k+1]. */
  owners: BlobParts;
  ownerStarts: Uint32Array;
  bailiwicks: BlobParts;
  rrsets: RrsetColumns;
  totals: ShardTotals;
  rdata: RdataParts;
  index: RdataIndexParts;
  flexNames: FlexNamesParts;
  flexRdata: FlexRdataParts;
}

/**
 * The FlatBuffer of a shard, as pieces that refer to the parts' own arrays
 * (piece-builder.ts); asserts that it stays within LIMITS.shardBytesMax.
 */
export function assembleShard(p: ShardParts, source: string, createdAt: number): FlatBufferPieces {
  const estimate = estimateBytes(p);
  assert.ok(estimate < LIMITS.shardBytesMax * LIMITS.shardBytesEstimateSlackRatio,
    `shard of ${estimate} bytes exceeds shardBytesMax; the ingest run must split it`);
  const pb = new PieceBuilder();
  const b = pb.asBuilder();
  const flexNames = addFlexNames(b, p.flexNames);
  const flexRdata = addFlexRdata(b, p.flexRdata);
  const rdata = addRdata(b, p.rdata);
  const rdataIndex = addRdataIndex(b, p.index);
  const rrsets = addRrsets(b, p.owners, p.ownerStarts, p.rrsets, p.rdata.rrsetRdata);
  const bails = addBlob(b, p.bailiwicks);
  const src = b.createString(source);
  Shard.startShard(b);
  Shard.addFormatVersion(b, SHARD_FORMAT_VERSION); Shard.addCreatedAt(b, createdAt); Shard.addRrsetCount(b, p.rrsets.rrtype.length);
  Shard.addObservationCount(b, p.totals.observationCount); Shard.addTimeMin(b, p.totals.timeMin); Shard.addTimeMax(b, p.totals.timeMax);
  Shard.addBailiwicks(b, bails); Shard.addRrsets(b, rrsets); Shard.addRdata(b, rdata);
  Shard.addRdataIndex(b, rdataIndex); Shard.addFlexNames(b, flexNames); Shard.addFlexRdata(b, flexRdata);
  Shard.addSource(b, src);
  Shard.finishShardBuffer(b, Shard.endShard(b));
  const out = pb.pieces();
  assert.ok(out.byteLength <= FLATBUFFER_BYTES_MAX, `shard FlatBuffer of ${out.byteLength} bytes exceeds the format's 2 GiB`);
  return out;
}

/** A FlatBuffer's offsets are signed 32-bit: no buffer can hold more. */
const FLATBUFFER_BYTES_MAX = 2 ** 31 - 1;

// The estimate's bytes per row: each row's vector elements, rounded up. A
// flex name entry is rrtype 2 + first 4 + last 4; a flex value entry adds
// its rdata id 4. An RRset's own columns are 34 bytes and an rdata's about
// 26, plus their links both ways; an owner name (counted twice, reversed
// and forward), a flex value and a target name key each cost an offset and
// one or two 4-byte columns.
const FIXED_BYTES = 4096;
const RRSET_ROW_BYTES = 40;
const RDATA_ROW_BYTES = 40;
const FLEX_NAME_ENTRY_BYTES = 10;
const FLEX_VALUE_ENTRY_BYTES = 14;
const NAME_ROW_BYTES = 12;

/** The shard's size, over-counted a little, to size the builder once and refuse a shard that would not fit. */
function estimateBytes(p: ShardParts): number {
  const names = p.flexNames, values = p.flexRdata;
  const nOwners = p.ownerStarts.length - 1;
  const nValues = values.values.offsets.length - 1, nNameKeys = p.index.nameKeys.offsets.length - 1;
  return FIXED_BYTES + p.owners.bytes.length + names.names.bytes.length + values.values.bytes.length +
    p.rdata.textBlob.bytes.length + p.index.nameKeys.bytes.length + p.rdata.wireBytes.length +
    names.trigrams.postings.length + values.trigrams.postings.length +
    4 * (names.trigrams.keys.length * 2 + values.trigrams.keys.length * 2) +
    p.rrsets.rrtype.length * RRSET_ROW_BYTES + p.rdata.type.length * RDATA_ROW_BYTES +
    names.entryType.length * FLEX_NAME_ENTRY_BYTES + values.entryType.length * FLEX_VALUE_ENTRY_BYTES +
    (2 * nOwners + nValues + nNameKeys) * NAME_ROW_BYTES;
}

type Typed = Uint8Array | Uint16Array | Uint32Array | Float64Array;

/** A vector of a typed array's elements, kept by reference (PieceBuilder.typedVector). */
function typedVector(b: flatbuffers.Builder, a: Typed): flatbuffers.Offset {
  return (b as unknown as PieceBuilder).typedVector(a);
}

// One function per table of the schema: each adds the table's vectors, then
// the table, and returns its offset. The order of the calls inside is part
// of the output's bytes (see the top of this file).

function addBlob(b: flatbuffers.Builder, p: BlobParts): flatbuffers.Offset {
  return Blob.createBlob(b, typedVector(b, p.bytes), typedVector(b, p.offsets));
}

function addTrigrams(b: flatbuffers.Builder, t: TrigramIndexParts): flatbuffers.Offset {
  return TrigramIndex.createTrigramIndex(b, typedVector(b, t.keys), typedVector(b, t.starts), typedVector(b, t.postings));
}

function addFlexNames(b: flatbuffers.Builder, p: FlexNamesParts): flatbuffers.Offset {
  const names = addBlob(b, p.names);
  const owner = typedVector(b, p.owner);
  const starts = typedVector(b, p.entryStarts);
  const type = typedVector(b, p.entryType);
  const first = typedVector(b, p.entryFirst);
  const last = typedVector(b, p.entryLast);
  const trigrams = addTrigrams(b, p.trigrams);
  FlexNames.startFlexNames(b);
  FlexNames.addNames(b, names); FlexNames.addOwner(b, owner); FlexNames.addEntryStarts(b, starts);
  FlexNames.addEntryType(b, type); FlexNames.addEntryFirst(b, first); FlexNames.addEntryLast(b, last);
  FlexNames.addTrigrams(b, trigrams);
  return FlexNames.endFlexNames(b);
}

function addFlexRdata(b: flatbuffers.Builder, p: FlexRdataParts): flatbuffers.Offset {
  const values = addBlob(b, p.values);
  const starts = typedVector(b, p.entryStarts);
  const type = typedVector(b, p.entryType);
  const rdata = typedVector(b, p.entryRdata);
  const first = typedVector(b, p.entryFirst);
  const last = typedVector(b, p.entryLast);
  const trigrams = addTrigrams(b, p.trigrams);
  FlexRdata.startFlexRdata(b);
  FlexRdata.addValues(b, values); FlexRdata.addEntryStarts(b, starts); FlexRdata.addEntryType(b, type);
  FlexRdata.addEntryRdata(b, rdata); FlexRdata.addEntryFirst(b, first); FlexRdata.addEntryLast(b, last);
  FlexRdata.addTrigrams(b, trigrams);
  return FlexRdata.endFlexRdata(b);
}

function addRdata(b: flatbuffers.Builder, p: RdataParts): flatbuffers.Offset {
  const type = typedVector(b, p.type);
  const text = addBlob(b, p.textBlob);
  const wire = typedVector(b, p.wireBytes);
  const wireOffsets = typedVector(b, p.wireOffsets);
  const rrsetStarts = typedVector(b, p.rdataRrset.starts);
  const rrsetRows = typedVector(b, p.rdataRrset.rows);
  FbRdata.startRdata(b);
  FbRdata.addRrtype(b, type); FbRdata.addText(b, text); FbRdata.addWire(b, wire);
  FbRdata.addWireOffsets(b, wireOffsets); FbRdata.addRrsetStarts(b, rrsetStarts); FbRdata.addRrsetRows(b, rrsetRows);
  return FbRdata.endRdata(b);
}

function addRdataIndex(b: flatbuffers.Builder, p: RdataIndexParts): flatbuffers.Offset {
  const nameKeys = addBlob(b, p.nameKeys);
  const nameStarts = typedVector(b, p.nameStarts);
  const nameRdata = typedVector(b, p.nameRdata);
  const nameFwd = typedVector(b, p.nameFwdOrder);
  const ip4Keys = typedVector(b, p.ip4Keys);
  const ip4Rdata = typedVector(b, p.ip4Rdata);
  const ip6Keys = typedVector(b, p.ip6Keys);
  const ip6Rdata = typedVector(b, p.ip6Rdata);
  const wire = typedVector(b, p.wireOrder);
  RdataIndex.startRdataIndex(b);
  RdataIndex.addNameKeys(b, nameKeys); RdataIndex.addNameStarts(b, nameStarts); RdataIndex.addNameRdata(b, nameRdata);
  RdataIndex.addNameFwdOrder(b, nameFwd); RdataIndex.addIp4Keys(b, ip4Keys); RdataIndex.addIp4Rdata(b, ip4Rdata);
  RdataIndex.addIp6Keys(b, ip6Keys); RdataIndex.addIp6Rdata(b, ip6Rdata); RdataIndex.addWireOrder(b, wire);
  return RdataIndex.endRdataIndex(b);
}

function addRrsets(b: flatbuffers.Builder, owners: BlobParts, ownerStarts: Uint32Array, c: RrsetColumns,
  rrsetRdata: Csr): flatbuffers.Offset {
  const ownersBlob = addBlob(b, owners);
  const starts = typedVector(b, ownerStarts);
  const type = typedVector(b, c.rrtype);
  const bailiwick = typedVector(b, c.bailiwick);
  const count = typedVector(b, c.count);
  const tf = typedVector(b, c.timeFirst), tl = typedVector(b, c.timeLast);
  const ztf = typedVector(b, c.zoneTimeFirst), ztl = typedVector(b, c.zoneTimeLast);
  const rdataStarts = typedVector(b, rrsetRdata.starts);
  const rdataRows = typedVector(b, rrsetRdata.rows);
  Rrsets.startRrsets(b);
  Rrsets.addOwners(b, ownersBlob); Rrsets.addOwnerStarts(b, starts); Rrsets.addRrtype(b, type);
  Rrsets.addBailiwick(b, bailiwick); Rrsets.addCount(b, count); Rrsets.addTimeFirst(b, tf); Rrsets.addTimeLast(b, tl);
  Rrsets.addZoneTimeFirst(b, ztf); Rrsets.addZoneTimeLast(b, ztl); Rrsets.addRdataStarts(b, rdataStarts);
  Rrsets.addRdataRows(b, rdataRows);
  return Rrsets.endRrsets(b);
}
