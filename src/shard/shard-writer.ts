// ShardWriter: aggregated RRsets in, one immutable shard file out.
//
// Contract: buildShardBody() takes RRsets that are already aggregated (see
// src/shard/rrset-table.ts; each key at most once) in any order and returns the
// FlatBuffer of schema/shard.fbs; writeShardFile() publishes it under a new
// name with the header of format.ts (temp file, fsync, rename, fsync dir).
// A shard file is never written twice: compaction writes new files and swaps
// the manifest. The writer re-reads and verifies what it wrote before it
// returns, so a bad disk cannot publish a shard that will be refused on load.
//
// Cost: sorting dominates. Names and values are sorted as byte records by
// native/sort.cc (five to ten times faster than V8 sorting the strings), and
// grouping is done by sorting rather than by Maps keyed by fresh strings.
// The RRsets arrive interned in columns (RrsetTable), so the writer never
// hashes or compares an RRset's strings except to break rare ties.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import * as flatbuffers from 'flatbuffers';
import { reverseName } from '../dns/name.js';
import { rdataTargetName } from '../dns/rdata-names.js';
import { RR, isFlexRdataType } from '../dns/rrtype.js';
import { minNonZero } from '../model/sighting.js';
import { Column, type RrsetTable } from './rrset-table.js';
import { buildTrigramIndex, type TrigramIndexParts } from './trigram-index.js';
import { LIMITS } from '../config/limits.js';
import { asDiskFull } from '../errors/catalogue.js';
import { encodeHeader, SHARD_FILE_SUFFIX, SHARD_FORMAT_VERSION } from './format.js';
import {
  Blob, FlexNames, FlexRdata, Rdata as FbRdata, RdataIndex, Rrsets, Shard, TrigramIndex,
} from './generated/shard_generated.js';
import { openShard } from './shard-reader.js';
import { sortRecords } from './record-sort.js';
import { compareRrsetTails, sortRrsets } from './rrset-order.js';

assert.ok(new Uint8Array(new Uint16Array([1]).buffer)[0] === 1, 'shards are little-endian; typed arrays are copied raw');

type Typed = Uint8Array | Uint16Array | Uint32Array | Float64Array;

/**
 * A vector copied in one memcpy. The generated create*Vector() helpers add
 * one element per call (~10x slower on millions of rows); this does what the
 * runtime's own createByteVector() does, for any element size, and keeps the
 * element count right (createByteVector would record a byte count).
 */
function typedVector(b: flatbuffers.Builder, a: Typed): flatbuffers.Offset {
  const bytes = new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
  b.startVector(a.BYTES_PER_ELEMENT, a.length, a.BYTES_PER_ELEMENT);
  const inner = b as unknown as { space: number; bb: flatbuffers.ByteBuffer };
  inner.space -= bytes.length;
  inner.bb.setPosition(inner.space);
  inner.bb.bytes().set(bytes, inner.space);
  return b.endVector();
}

export interface BlobParts {
  bytes: Buffer;
  offsets: Uint32Array;
}

// Records are written to a blob a batch at a time: one join and one write per
// batch instead of one write call per record.
const BLOB_BATCH_RECORDS = 4096;

/** Records joined with a trailing newline each (see the blob convention in shard.fbs). */
export function makeBlob(records: readonly string[]): BlobParts {
  const n = records.length;
  const offsets = new Uint32Array(n + 1);
  let total = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = total;
    total += records[i]!.length + 1;
  }
  assert.ok(total < 2 ** 32, 'blob exceeds 4 GiB; shardBytesMax should have split the shard');
  offsets[n] = total;
  const bytes = Buffer.allocUnsafe(total);
  for (let i = 0; i < n; i += BLOB_BATCH_RECORDS) {
    const joined = `${records.slice(i, i + BLOB_BATCH_RECORDS).join('\n')}\n`;
    // latin1 would silently keep the low byte of a wider character.
    if (Buffer.byteLength(joined, 'utf8') !== joined.length) assert.fail(`blob record not ASCII near record ${i}`);
    bytes.write(joined, offsets[i]!, 'latin1');
  }
  // The scan's newline rewrite is exact only because every record is
  // printable ASCII and the newline after it is the only one.
  let newlines = 0;
  for (let j = 0; j < total; j++) {
    const c = bytes[j]!;
    if (c === 0x0a) newlines++;
    else if (c < 0x20 || c > 0x7e) assert.fail(`blob record not printable ASCII at byte ${j}`);
  }
  if (newlines !== n) assert.fail(`a blob record holds a newline (${newlines} newlines for ${n} records)`);
  return { bytes, offsets };
}

/** Sorted order of strings (printable ASCII) by the shard's byte order. */
function sortedOrder(keys: readonly string[], tiebreak?: Uint32Array): Uint32Array {
  return sortedBlob(keys, tiebreak).order;
}

/**
 * The sorted order of strings and the blob of them in that order. The sorted
 * blob is the unsorted one with its records moved, not the strings encoded
 * and checked a second time.
 */
function sortedBlob(keys: readonly string[], tiebreak?: Uint32Array): { order: Uint32Array; sorted: BlobParts } {
  const blob = makeBlob(keys);
  const order = sortRecords(blob.bytes, blob.offsets, tiebreak);
  const bytes = Buffer.allocUnsafe(blob.bytes.length);
  const offsets = new Uint32Array(order.length + 1);
  let at = 0;
  for (let k = 0; k < order.length; k++) {
    offsets[k] = at;
    const from = blob.offsets[order[k]!]!, to = blob.offsets[order[k]! + 1]!;
    for (let j = from; j < to; j++) bytes[at++] = blob.bytes[j]!;
  }
  offsets[order.length] = at;
  return { order, sorted: { bytes, offsets } };
}

function permute<T>(list: readonly T[], order: Uint32Array): T[] {
  const out: T[] = new Array(order.length);
  for (let i = 0; i < order.length; i++) out[i] = list[order[i]!]!;
  return out;
}

/** Compressed rows: group g holds rows[starts[g] .. starts[g+1]). */
interface Csr {
  starts: Uint32Array;
  rows: Uint32Array;
}

export interface ShardStats {
  rrsets: number;
  owners: number;
  rdata: number;
  flexRdataValues: number;
  bytes: number;
}

/** Builds the shard of an RrsetTable's RRsets; the table is only read. */
export function buildShardBody(table: RrsetTable, source: string, createdAt: number): { body: Uint8Array; stats: ShardStats } {
  const n = table.size;
  const names = table.names;
  const nOwners = names.length;
  const tOwner = table.owner.view(), tType = table.rrtype.view(), tBail = table.bailiwick.view();
  const tRdStarts = table.rdataStarts.view(), tRdRows = table.rdataRows.view();

  // ---- ranks of owners (by reversed name) and bailiwicks ----
  const owners = sortedBlob(names.map(reverseName));
  const ownerByRank = owners.order;
  const ownerRank = new Uint32Array(nOwners);
  for (let k = 0; k < nOwners; k++) ownerRank[ownerByRank[k]!] = k;
  const bailiwicks = sortedBlob(table.bailiwicks);
  const bailiwickRank = new Uint32Array(table.bailiwicks.length);
  for (let k = 0; k < table.bailiwicks.length; k++) bailiwickRank[bailiwicks.order[k]!] = k;

  // ---- RRsets in the shard's order (rrset-order.ts) ----
  const text = table.rdataText;
  const compareTails = compareRrsetTails({
    rrtype: tType, bailiwick: tBail, bailiwickRank, rdataStarts: tRdStarts, rdataRows: tRdRows, rdataText: text,
  });
  const { order } = sortRrsets(tOwner, ownerRank, compareTails);

  // ---- per-RRset columns in that order; owners ----
  const rrtype = new Uint16Array(n);
  const bailiwick = new Uint32Array(n);
  const count = new Float64Array(n);
  const tf = new Uint32Array(n), tl = new Uint32Array(n), ztf = new Uint32Array(n), ztl = new Uint32Array(n);
  const ownerStarts = new Uint32Array(nOwners + 1);
  let observationCount = 0;
  let timeMin = 0, timeMax = 0;
  let ownersSeen = 0;
  for (let i = 0; i < n; i++) {
    const r = order[i]!;
    if (i === 0 || tOwner[r] !== tOwner[order[i - 1]!]) ownerStarts[ownersSeen++] = i;
    rrtype[i] = tType[r]!;
    bailiwick[i] = bailiwickRank[tBail[r]!]!;
    count[i] = table.count.get(r);
    tf[i] = table.timeFirst.get(r); tl[i] = table.timeLast.get(r);
    ztf[i] = table.zoneTimeFirst.get(r); ztl[i] = table.zoneTimeLast.get(r);
    observationCount += count[i]!;
    timeMin = minNonZero(timeMin, minNonZero(tf[i]!, ztf[i]!));
    timeMax = Math.max(timeMax, tl[i]!, ztl[i]!);
  }
  assert.equal(ownersSeen, nOwners, 'every interned owner name owns an RRset');
  ownerStarts[nOwners] = n;

  // ---- unique rdata, numbered in order of first appearance ----
  const nRdata = text.length;
  const newId = new Int32Array(nRdata).fill(-1);
  const oldOf = new Uint32Array(nRdata);
  const rrsetRdata: Csr = { starts: new Uint32Array(n + 1), rows: new Uint32Array(tRdRows.length) };
  const perRdata = new Uint32Array(nRdata + 1);
  let next = 0, at = 0;
  for (let i = 0; i < n; i++) {
    const r = order[i]!;
    rrsetRdata.starts[i] = at;
    for (let j = tRdStarts[r]!; j < tRdStarts[r + 1]!; j++) {
      const old = tRdRows[j]!;
      if (newId[old] === -1) { newId[old] = next; oldOf[next++] = old; }
      rrsetRdata.rows[at++] = newId[old]!;
      perRdata[newId[old]!]!++;
    }
  }
  rrsetRdata.starts[n] = at;
  assert.equal(next, nRdata, 'every interned rdata belongs to an RRset');
  // RRsets of each rdata, ascending (RRsets are visited in order).
  const rdataRrset: Csr = { starts: new Uint32Array(nRdata + 1), rows: new Uint32Array(at) };
  for (let id = 0, sum = 0; id <= nRdata; id++) { rdataRrset.starts[id] = sum; sum += perRdata[id]!; }
  const fill = rdataRrset.starts.slice(0, nRdata);
  for (let i = 0; i < n; i++) {
    for (let j = rrsetRdata.starts[i]!; j < rrsetRdata.starts[i + 1]!; j++) rdataRrset.rows[fill[rrsetRdata.rows[j]!]!++] = i;
  }
  const rdataType = new Uint16Array(nRdata);
  const rdataText: string[] = new Array(nRdata);
  const wireOffsets = new Uint32Array(nRdata + 1);
  const wireFrom = table.wireStarts.view();
  const arena = table.wireBytes.view();
  const wireBytes = new Uint8Array(arena.length);
  for (let id = 0, w = 0; id < nRdata; id++) {
    const old = oldOf[id]!;
    rdataType[id] = table.rdataType.get(old);
    rdataText[id] = text[old]!;
    wireOffsets[id] = w;
    // A byte loop: records are a few bytes, and a subarray per record cost more than the copy.
    for (let k = wireFrom[old]!; k < wireFrom[old + 1]!; k++) wireBytes[w++] = arena[k]!;
    wireOffsets[id + 1] = w;
  }

  /** Rdata ids of fixed-size wire forms, sorted by wire then id, with their keys side by side. */
  const sortedWireIds = (ids: readonly number[], size: number): { ids: Uint32Array; keys: Uint8Array } => {
    const keys = new Uint8Array(ids.length * size);
    for (let i = 0; i < ids.length; i++) {
      for (let k = 0; k < size; k++) keys[i * size + k] = wireBytes[wireOffsets[ids[i]!]! + k]!;
    }
    const order = sortRecords(keys, Uint32Array.from({ length: ids.length + 1 }, (_, i) => i * size));
    const sorted = new Uint8Array(keys.length);
    const sortedIds = new Uint32Array(order.length);
    for (let i = 0; i < order.length; i++) {
      const from = order[i]! * size;
      for (let k = 0; k < size; k++) sorted[i * size + k] = keys[from + k]!;
      sortedIds[i] = ids[order[i]!]!;
    }
    return { ids: sortedIds, keys: sorted };
  };

  // ---- rdata inverse indexes ----
  // Grouped by sorting, not by hashing: a Map keyed by fresh strings cost
  // about a microsecond per record here.
  const targetRev: string[] = [];
  const targetId: number[] = [];
  const ip4Ids: number[] = [];
  const ip6Ids: number[] = [];
  for (let id = 0; id < nRdata; id++) {
    const t = rdataType[id]!;
    const len = wireOffsets[id + 1]! - wireOffsets[id]!;
    if (t === RR.A && len === 4) ip4Ids.push(id);
    else if (t === RR.AAAA && len === 16) ip6Ids.push(id);
    const target = rdataTargetName(t, rdataText[id]!);
    if (target !== undefined) {
      targetRev.push(reverseName(target));
      targetId.push(id);
    }
  }
  // Ties (one target name, several rdata) keep rdata id order: sortRecords
  // breaks ties by position and targetId ascends.
  const targetOrder = sortedOrder(targetRev);
  const sortedNameKeys: string[] = [];
  const nameStarts = new Column(Uint32Array);
  const nameRdata = new Uint32Array(targetOrder.length);
  for (let k = 0; k < targetOrder.length; k++) {
    const key = targetRev[targetOrder[k]!]!;
    if (sortedNameKeys.length === 0 || sortedNameKeys[sortedNameKeys.length - 1] !== key) {
      sortedNameKeys.push(key);
      nameStarts.push(k);
    }
    nameRdata[k] = targetId[targetOrder[k]!]!;
  }
  nameStarts.push(targetOrder.length);
  const nameFwdOrder = sortedOrder(sortedNameKeys.map(reverseName));
  // Address keys are the wire bytes themselves (network order sorts as numbers).
  const ip4 = sortedWireIds(ip4Ids, 4);
  const ip6 = sortedWireIds(ip6Ids, 16);
  const ip4Keys = new Uint32Array(ip4.ids.length);
  for (let i = 0; i < ip4Keys.length; i++) {
    const k = ip4.keys;
    ip4Keys[i] = ((k[i * 4]! << 24) | (k[i * 4 + 1]! << 16) | (k[i * 4 + 2]! << 8) | k[i * 4 + 3]!) >>> 0;
  }
  const wireOrder = sortRecords(wireBytes, wireOffsets, Uint32Array.from(rdataType));

  // ---- flex names: forward order, one entry per rrtype ----
  // ownerFwd[k] is the owner of rank k (the reversed-name order RRsets use).
  const ownerFwd = permute(names, ownerByRank);
  const forward = sortedBlob(ownerFwd);
  const nameOrder = forward.order;
  const flexOwner = nameOrder;
  const entryStarts = new Uint32Array(nOwners + 1);
  const eType = new Column(Uint16Array), eFirst = new Column(Uint32Array), eLast = new Column(Uint32Array);
  for (let k = 0; k < nOwners; k++) {
    const owner = nameOrder[k]!;
    entryStarts[k] = eType.length;
    // RRsets of one owner are sorted by rrtype, so each type is one run.
    for (let i = ownerStarts[owner]!; i < ownerStarts[owner + 1]!; i++) {
      const first = minNonZero(tf[i]!, ztf[i]!);
      const last = Math.max(tl[i]!, ztl[i]!);
      const j = eType.length - 1;
      if (j >= entryStarts[k]! && eType.get(j) === rrtype[i]) {
        eFirst.set(j, minNonZero(eFirst.get(j), first));
        eLast.set(j, Math.max(eLast.get(j), last));
      } else {
        eType.push(rrtype[i]!); eFirst.push(first); eLast.push(last);
      }
    }
  }
  entryStarts[nOwners] = eType.length;

  // ---- flex rdata: unique presentation values of name/text types ----
  // Sorted by (text, rrtype); equal texts of several types form one value.
  const flexIds: number[] = [];
  for (let id = 0; id < nRdata; id++) if (isFlexRdataType(rdataType[id]!)) flexIds.push(id);
  const flexOrder = sortedOrder(flexIds.map((id) => rdataText[id]!), Uint32Array.from(flexIds, (id) => rdataType[id]!));
  const values: string[] = [];
  const vStarts = new Column(Uint32Array);
  const vType = new Column(Uint16Array), vRdata = new Column(Uint32Array), vFirst = new Column(Uint32Array), vLast = new Column(Uint32Array);
  for (let k = 0; k < flexOrder.length; k++) {
    const id = flexIds[flexOrder[k]!]!;
    if (values.length === 0 || values[values.length - 1] !== rdataText[id]) {
      values.push(rdataText[id]!);
      vStarts.push(vType.length);
    }
    let first = 0, last = 0;
    for (let j = rdataRrset.starts[id]!; j < rdataRrset.starts[id + 1]!; j++) {
      const i = rdataRrset.rows[j]!;
      first = minNonZero(first, minNonZero(tf[i]!, ztf[i]!));
      last = Math.max(last, tl[i]!, ztl[i]!);
    }
    vType.push(rdataType[id]!); vRdata.push(id); vFirst.push(first); vLast.push(last);
  }
  vStarts.push(vType.length);

  // ---- blobs and trigram indexes ----
  const ownersBlob = owners.sorted;
  const namesBlob = forward.sorted;
  const valuesBlob = makeBlob(values);
  const bailiwickBlob = bailiwicks.sorted;
  const nameKeyBlob = makeBlob(sortedNameKeys);
  const rdataTextBlob = makeBlob(rdataText);
  const wireTotal = wireBytes.length;
  const namesTri = buildTrigramIndex({ blob: namesBlob.bytes, offsets: namesBlob.offsets });
  const valuesTri = buildTrigramIndex({ blob: valuesBlob.bytes, offsets: valuesBlob.offsets });

  // ---- FlatBuffer ----
  const estimate = 4096 + ownersBlob.bytes.length + namesBlob.bytes.length + valuesBlob.bytes.length +
    rdataTextBlob.bytes.length + nameKeyBlob.bytes.length + wireTotal + namesTri.postings.length + valuesTri.postings.length +
    4 * (namesTri.keys.length * 2 + valuesTri.keys.length * 2) + n * 40 + nRdata * 40 + eType.length * 10 + vType.length * 14 +
    (2 * nOwners + values.length + sortedNameKeys.length) * 12;
  assert.ok(estimate < LIMITS.shardBytesMax * 1.1, `shard of ${estimate} bytes exceeds shardBytesMax; the ingest run must split it`);
  const b = new flatbuffers.Builder(Math.min(2 ** 31 - 1, Math.ceil(estimate * 1.05)));
  const blob = (p: BlobParts) => Blob.createBlob(b, typedVector(b, p.bytes), typedVector(b, p.offsets));
  const tri = (t: TrigramIndexParts) =>
    TrigramIndex.createTrigramIndex(b, typedVector(b, t.keys), typedVector(b, t.starts), typedVector(b, t.postings));

  const fnNames = blob(namesBlob);
  const fnOwner = typedVector(b, flexOwner);
  const fnStarts = typedVector(b, entryStarts);
  const fnType = typedVector(b, eType.view());
  const fnFirst = typedVector(b, eFirst.view());
  const fnLast = typedVector(b, eLast.view());
  const fnTri = tri(namesTri);
  FlexNames.startFlexNames(b);
  FlexNames.addNames(b, fnNames); FlexNames.addOwner(b, fnOwner); FlexNames.addEntryStarts(b, fnStarts);
  FlexNames.addEntryType(b, fnType); FlexNames.addEntryFirst(b, fnFirst); FlexNames.addEntryLast(b, fnLast);
  FlexNames.addTrigrams(b, fnTri);
  const flexNames = FlexNames.endFlexNames(b);

  const frValues = blob(valuesBlob);
  const frStarts = typedVector(b, vStarts.view());
  const frType = typedVector(b, vType.view());
  const frRdata = typedVector(b, vRdata.view());
  const frFirst = typedVector(b, vFirst.view());
  const frLast = typedVector(b, vLast.view());
  const frTri = tri(valuesTri);
  FlexRdata.startFlexRdata(b);
  FlexRdata.addValues(b, frValues); FlexRdata.addEntryStarts(b, frStarts); FlexRdata.addEntryType(b, frType);
  FlexRdata.addEntryRdata(b, frRdata); FlexRdata.addEntryFirst(b, frFirst); FlexRdata.addEntryLast(b, frLast);
  FlexRdata.addTrigrams(b, frTri);
  const flexRdata = FlexRdata.endFlexRdata(b);

  const rdType = typedVector(b, rdataType);
  const rdText = blob(rdataTextBlob);
  const rdWire = typedVector(b, wireBytes);
  const rdWireOff = typedVector(b, wireOffsets);
  const rdRrStarts = typedVector(b, rdataRrset.starts);
  const rdRrRows = typedVector(b, rdataRrset.rows);
  FbRdata.startRdata(b);
  FbRdata.addRrtype(b, rdType); FbRdata.addText(b, rdText); FbRdata.addWire(b, rdWire);
  FbRdata.addWireOffsets(b, rdWireOff); FbRdata.addRrsetStarts(b, rdRrStarts); FbRdata.addRrsetRows(b, rdRrRows);
  const rdata = FbRdata.endRdata(b);

  const ixNameKeys = blob(nameKeyBlob);
  const ixNameStarts = typedVector(b, nameStarts.view());
  const ixNameRdata = typedVector(b, nameRdata);
  const ixNameFwd = typedVector(b, nameFwdOrder);
  const ixIp4Keys = typedVector(b, ip4Keys);
  const ixIp4Rdata = typedVector(b, ip4.ids);
  const ixIp6Keys = typedVector(b, ip6.keys);
  const ixIp6Rdata = typedVector(b, ip6.ids);
  const ixWire = typedVector(b, wireOrder);
  RdataIndex.startRdataIndex(b);
  RdataIndex.addNameKeys(b, ixNameKeys); RdataIndex.addNameStarts(b, ixNameStarts); RdataIndex.addNameRdata(b, ixNameRdata);
  RdataIndex.addNameFwdOrder(b, ixNameFwd); RdataIndex.addIp4Keys(b, ixIp4Keys); RdataIndex.addIp4Rdata(b, ixIp4Rdata);
  RdataIndex.addIp6Keys(b, ixIp6Keys); RdataIndex.addIp6Rdata(b, ixIp6Rdata); RdataIndex.addWireOrder(b, ixWire);
  const rdataIndex = RdataIndex.endRdataIndex(b);

  const rsOwners = blob(ownersBlob);
  const rsOwnerStarts = typedVector(b, ownerStarts);
  const rsType = typedVector(b, rrtype);
  const rsBail = typedVector(b, bailiwick);
  const rsCount = typedVector(b, count);
  const rsTf = typedVector(b, tf), rsTl = typedVector(b, tl), rsZtf = typedVector(b, ztf), rsZtl = typedVector(b, ztl);
  const rsRdStarts = typedVector(b, rrsetRdata.starts);
  const rsRdRows = typedVector(b, rrsetRdata.rows);
  Rrsets.startRrsets(b);
  Rrsets.addOwners(b, rsOwners); Rrsets.addOwnerStarts(b, rsOwnerStarts); Rrsets.addRrtype(b, rsType);
  Rrsets.addBailiwick(b, rsBail); Rrsets.addCount(b, rsCount); Rrsets.addTimeFirst(b, rsTf); Rrsets.addTimeLast(b, rsTl);
  Rrsets.addZoneTimeFirst(b, rsZtf); Rrsets.addZoneTimeLast(b, rsZtl); Rrsets.addRdataStarts(b, rsRdStarts);
  Rrsets.addRdataRows(b, rsRdRows);
  const rrsetsTable = Rrsets.endRrsets(b);

  const bails = blob(bailiwickBlob);
  const src = b.createString(source);
  Shard.startShard(b);
  Shard.addFormatVersion(b, SHARD_FORMAT_VERSION); Shard.addCreatedAt(b, createdAt); Shard.addRrsetCount(b, n);
  Shard.addObservationCount(b, observationCount); Shard.addTimeMin(b, timeMin); Shard.addTimeMax(b, timeMax);
  Shard.addBailiwicks(b, bails); Shard.addRrsets(b, rrsetsTable); Shard.addRdata(b, rdata);
  Shard.addRdataIndex(b, rdataIndex); Shard.addFlexNames(b, flexNames); Shard.addFlexRdata(b, flexRdata);
  Shard.addSource(b, src);
  const root = Shard.endShard(b);
  Shard.finishShardBuffer(b, root);
  const body = b.asUint8Array();
  return {
    body,
    stats: { rrsets: n, owners: nOwners, rdata: nRdata, flexRdataValues: values.length, bytes: body.byteLength },
  };
}

/**
 * Publishes a shard body as `<dir>/<created>-<writer>-<random>.rrs`, where
 * `writer` is the run's WriterLock id (file-lock.ts): temp file, fsync, rename,
 * fsync of the directory, then a full verifying load of the final file.
 * Returns the file name (not the path). Nothing references the file until
 * the caller swaps it into the manifest.
 */
export async function writeShardFile(dir: string, body: Uint8Array, createdAt: number, writer: string): Promise<string> {
  const name = shardFileName(createdAt, writer);
  const final = path.join(dir, name);
  const tmp = path.join(dir, `.${name}.tmp`);
  const fh = await fsp.open(tmp, 'wx').catch((err: unknown) => { throw asDiskFull(err, dir, `shard ${name}`); });
  try {
    try {
      await writeFully(fh, [encodeHeader(body), body]);
      await fh.sync();
    } finally {
      await fh.close();
    }
    await fsp.rename(tmp, final);
  } catch (err) {
    // Whatever failed (most often a full disk), the temp file must go: no
    // manifest will ever list it, so nothing else would delete it.
    await fsp.rm(tmp, { force: true });
    throw asDiskFull(err, dir, `shard ${name}`);
  }
  await syncDir(dir);
  // Read back through the same path a server takes: refuse to publish a shard it would refuse.
  try {
    openShard(final);
  } catch (err) {
    await fsp.rm(final, { force: true });
    throw err;
  }
  return name;
}

// A shard's name: <created>-<writer id>-<random>.rrs; its temp file the same
// with a leading dot and a trailing .tmp. The writer's id lets a later run
// tell the shards of a writer that died unpublished from those of one still
// running (file-lock.ts, manifest.ts); once published it is only a name.
const SHARD_NAME = /^\.?\d{10}-([0-9a-f]{12})-[0-9a-f]{12}\.rrs(?:\.tmp)?$/;

function shardFileName(createdAt: number, writer: string): string {
  const name = `${createdAt.toString().padStart(10, '0')}-${writer}-${randomBytes(6).toString('hex')}${SHARD_FILE_SUFFIX}`;
  assert.ok(SHARD_NAME.test(name), `writer id ${writer} does not fit a shard name`);
  return name;
}

/** The writer id in a shard's (or its temp file's) name; undefined for any other name, shards named before writer ids included. */
export function writerOfShardFile(name: string): string | undefined {
  return SHARD_NAME.exec(name)?.[1];
}

/**
 * Writes every byte of `chunks` or throws why not. writev() alone is not
 * enough: libuv stops at the first failed write and reports the bytes
 * written before it, so a disk that fills up part-way shows up as a short
 * count and no error (the shard was then renamed truncated and refused as
 * "corrupt"). Writing the rest again gets the file system's reason (ENOSPC).
 */
async function writeFully(fh: fsp.FileHandle, chunks: readonly Uint8Array[]): Promise<void> {
  const total = chunks.reduce((n, c) => n + c.byteLength, 0);
  let done = (await fh.writev([...chunks])).bytesWritten;
  let at = 0;
  for (const chunk of chunks) {
    const end = at + chunk.byteLength;
    while (done < end) {
      const { bytesWritten } = await fh.write(chunk, done - at, end - done);
      assert.ok(bytesWritten > 0, 'write() wrote nothing and reported no error');
      done += bytesWritten;
    }
    at = end;
  }
  assert.ok(done === total);
}

export async function syncDir(dir: string): Promise<void> {
  const dh = await fsp.open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
