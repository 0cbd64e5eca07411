// ShardWriter: aggregated RRsets in, one immutable shard file out.
//
// Contract: buildShardBody() takes RRsets that are already aggregated (see
// src/ingest/aggregate.ts; each key at most once) in any order and returns the
// FlatBuffer of schema/shard.fbs; writeShardFile() publishes it under a new
// name with the header of format.ts (temp file, fsync, rename, fsync dir).
// A shard file is never written twice: compaction writes new files and swaps
// the manifest. The writer re-reads and verifies what it wrote before it
// returns, so a bad disk cannot publish a shard that will be refused on load.
//
// Cost: sorting dominates. Sort keys are plain strings sorted with the
// default comparator (no JS callback per comparison), which is several times
// faster than a comparator function on millions of rows.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import path from 'node:path';
import * as flatbuffers from 'flatbuffers';
import { reverseName } from '../dns/name.js';
import { rdataTargetName } from '../dns/rdata-names.js';
import { RR, isFlexRdataType } from '../dns/rrtype.js';
import type { Observation } from '../ingest/observation.js';
import { minNonZero } from '../ingest/aggregate.js';
import { buildTrigramIndex, type TrigramIndexParts } from '../scan/trigram-index.js';
import { LIMITS } from '../config/limits.js';
import { encodeHeader, SHARD_FILE_SUFFIX, SHARD_FORMAT_VERSION } from './format.js';
import {
  Blob, FlexNames, FlexRdata, Rdata as FbRdata, RdataIndex, Rrsets, Shard, TrigramIndex,
} from './generated/shard_generated.js';
import { openShard } from './shard-reader.js';

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

const PRINTABLE_ONLY = /^[\x20-\x7e]*$/;

export interface BlobParts {
  bytes: Buffer;
  offsets: Uint32Array;
}

/** Records joined with a trailing newline each (see the blob convention in shard.fbs). */
export function makeBlob(records: readonly string[]): BlobParts {
  let total = 0;
  for (const r of records) total += r.length + 1;
  assert.ok(total < 2 ** 32, 'blob exceeds 4 GiB; shardBytesMax should have split the shard');
  const bytes = Buffer.allocUnsafe(total);
  const offsets = new Uint32Array(records.length + 1);
  let at = 0;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    // The scan's newline rewrite is exact only because records are printable ASCII.
    assert.ok(PRINTABLE_ONLY.test(r), `blob record not printable ASCII: ${JSON.stringify(r)}`);
    offsets[i] = at;
    at += bytes.write(r, at, 'latin1');
    bytes[at++] = 0x0a;
  }
  offsets[records.length] = at;
  return { bytes, offsets };
}

/** Sorts indices by string keys with V8's native string sort. */
function sortedOrder(keys: readonly string[]): Uint32Array {
  const tagged = keys.map((k, i) => `${k}\u0000${i}`);
  tagged.sort();
  const out = new Uint32Array(keys.length);
  for (let i = 0; i < tagged.length; i++) {
    const t = tagged[i]!;
    out[i] = Number(t.slice(t.lastIndexOf('\u0000') + 1));
  }
  return out;
}

function csr(groups: readonly (readonly number[])[]): { starts: Uint32Array; rows: Uint32Array } {
  const starts = new Uint32Array(groups.length + 1);
  let total = 0;
  for (let i = 0; i < groups.length; i++) {
    starts[i] = total;
    total += groups[i]!.length;
  }
  starts[groups.length] = total;
  const rows = new Uint32Array(total);
  let at = 0;
  for (const g of groups) for (const v of g) rows[at++] = v;
  return { starts, rows };
}

export interface ShardStats {
  rrsets: number;
  owners: number;
  rdata: number;
  flexRdataValues: number;
  bytes: number;
}

export function buildShardBody(input: readonly Observation[], source: string, createdAt: number): { body: Uint8Array; stats: ShardStats } {
  // ---- RRsets in (reversed owner, rrtype, bailiwick, rdata) order ----
  const revOf = input.map((o) => reverseName(o.rrname));
  const order = sortedOrder(input.map((o, i) => {
    let k = `${revOf[i]}\u0001${o.rrtype.toString(16).padStart(4, '0')}\u0001${o.bailiwick}`;
    for (const r of o.rdata) k += `\u0001${r.text}`;
    return k;
  }));
  const n = input.length;
  const rrsets: Observation[] = new Array(n);
  const revSorted: string[] = new Array(n);
  for (let i = 0; i < n; i++) {
    rrsets[i] = input[order[i]!]!;
    revSorted[i] = revOf[order[i]!]!;
  }

  // ---- owners ----
  const ownerRev: string[] = [];
  const ownerFwd: string[] = [];
  const ownerStartsList: number[] = [];
  for (let i = 0; i < n; i++) {
    if (i === 0 || revSorted[i] !== revSorted[i - 1]) {
      ownerRev.push(revSorted[i]!);
      ownerFwd.push(rrsets[i]!.rrname);
      ownerStartsList.push(i);
    }
  }
  ownerStartsList.push(n);

  // ---- bailiwicks ----
  const bailiwickNames = [...new Set(rrsets.map((r) => r.bailiwick))].sort();
  const bailiwickId = new Map(bailiwickNames.map((b, i) => [b, i]));

  // ---- unique rdata, rows in order of first appearance ----
  // One map per rrtype, keyed by text (text and wire are one-to-one within a type).
  const rdataIds = new Map<number, Map<string, number>>();
  const rdataType: number[] = [];
  const rdataText: string[] = [];
  const rdataWire: Uint8Array[] = [];
  const rdataRrsets: number[][] = [];
  const rrsetRdataRows: number[][] = new Array(n);
  for (let i = 0; i < n; i++) {
    const r = rrsets[i]!;
    const rows: number[] = [];
    let ids = rdataIds.get(r.rrtype);
    if (!ids) rdataIds.set(r.rrtype, (ids = new Map()));
    for (const rd of r.rdata) {
      let id = ids.get(rd.text);
      if (id === undefined) {
        id = rdataType.length;
        ids.set(rd.text, id);
        rdataType.push(r.rrtype);
        rdataText.push(rd.text);
        rdataWire.push(rd.wire);
        rdataRrsets.push([]);
      }
      const list = rdataRrsets[id]!;
      if (list[list.length - 1] !== i) list.push(i);
      rows.push(id);
    }
    rrsetRdataRows[i] = rows;
  }
  const nRdata = rdataType.length;

  // ---- per-RRset columns ----
  const rrtype = new Uint16Array(n);
  const bailiwick = new Uint32Array(n);
  const count = new Float64Array(n);
  const tf = new Uint32Array(n), tl = new Uint32Array(n), ztf = new Uint32Array(n), ztl = new Uint32Array(n);
  let observationCount = 0;
  let timeMin = 0, timeMax = 0;
  for (let i = 0; i < n; i++) {
    const r = rrsets[i]!;
    rrtype[i] = r.rrtype;
    bailiwick[i] = bailiwickId.get(r.bailiwick)!;
    count[i] = r.count;
    tf[i] = r.timeFirst; tl[i] = r.timeLast; ztf[i] = r.zoneTimeFirst; ztl[i] = r.zoneTimeLast;
    observationCount += r.count;
    timeMin = minNonZero(timeMin, minNonZero(r.timeFirst, r.zoneTimeFirst));
    timeMax = Math.max(timeMax, r.timeLast, r.zoneTimeLast);
  }
  const rrsetRdata = csr(rrsetRdataRows);
  const rdataRrsetCsr = csr(rdataRrsets);

  // ---- rdata inverse indexes ----
  const targetRows = new Map<string, number[]>();
  const ip4: number[] = [];
  const ip6: number[] = [];
  for (let id = 0; id < nRdata; id++) {
    const t = rdataType[id]!;
    const w = rdataWire[id]!;
    if (t === RR.A && w.length === 4) ip4.push(id);
    else if (t === RR.AAAA && w.length === 16) ip6.push(id);
    const target = rdataTargetName(t, rdataText[id]!);
    if (target !== undefined) {
      const rev = reverseName(target);
      const list = targetRows.get(rev);
      if (list) list.push(id);
      else targetRows.set(rev, [id]);
    }
  }
  const nameKeys = [...targetRows.keys()].sort();
  const nameCsr = csr(nameKeys.map((k) => targetRows.get(k)!));
  const nameFwdOrder = sortedOrder(nameKeys.map((k) => reverseName(k)));
  // Sort keys are computed once, never inside a comparator: a Buffer made
  // per comparison was a tenth of the writer's time.
  const ip4Of = new Uint32Array(nRdata);
  for (const id of ip4) {
    const w = rdataWire[id]!;
    ip4Of[id] = ((w[0]! << 24) | (w[1]! << 16) | (w[2]! << 8) | w[3]!) >>> 0;
  }
  ip4.sort((a, b) => ip4Of[a]! - ip4Of[b]! || a - b);
  const ip4Keys = Uint32Array.from(ip4, (id) => ip4Of[id]!);
  const wireKey = (id: number) => Buffer.from(rdataWire[id]!.buffer, rdataWire[id]!.byteOffset, rdataWire[id]!.byteLength).toString('latin1');
  const ip6Text = ip6.map((id) => `${wireKey(id)}\u0000${id}`).sort();
  for (let i = 0; i < ip6Text.length; i++) ip6[i] = Number(ip6Text[i]!.slice(17));
  const ip6Keys = new Uint8Array(ip6.length * 16);
  ip6.forEach((id, i) => ip6Keys.set(rdataWire[id]!, i * 16));
  const wireText = Array.from({ length: nRdata }, (_, i) => wireKey(i));
  const wireOrder = Array.from({ length: nRdata }, (_, i) => i)
    .sort((a, b) => (wireText[a]! < wireText[b]! ? -1 : wireText[a]! > wireText[b]! ? 1 : rdataType[a]! - rdataType[b]! || a - b));

  // ---- flex names: forward order, one entry per rrtype ----
  const nameOrder = sortedOrder(ownerFwd);
  const flexNameList: string[] = [];
  const flexOwner = new Uint32Array(ownerFwd.length);
  const entryStarts = new Uint32Array(ownerFwd.length + 1);
  const eType: number[] = [], eFirst: number[] = [], eLast: number[] = [];
  for (let k = 0; k < nameOrder.length; k++) {
    const owner = nameOrder[k]!;
    flexNameList.push(ownerFwd[owner]!);
    flexOwner[k] = owner;
    entryStarts[k] = eType.length;
    // RRsets of one owner are sorted by rrtype, so each type is one run.
    for (let i = ownerStartsList[owner]!; i < ownerStartsList[owner + 1]!; i++) {
      const first = minNonZero(tf[i]!, ztf[i]!);
      const last = Math.max(tl[i]!, ztl[i]!);
      if (eType.length > entryStarts[k]! && eType[eType.length - 1] === rrtype[i]) {
        const j = eType.length - 1;
        eFirst[j] = minNonZero(eFirst[j]!, first);
        eLast[j] = Math.max(eLast[j]!, last);
      } else {
        eType.push(rrtype[i]!); eFirst.push(first); eLast.push(last);
      }
    }
  }
  entryStarts[ownerFwd.length] = eType.length;

  // ---- flex rdata: unique presentation values of name/text types ----
  const valueRows = new Map<string, number[]>();
  for (let id = 0; id < nRdata; id++) {
    if (!isFlexRdataType(rdataType[id]!)) continue;
    const list = valueRows.get(rdataText[id]!);
    if (list) list.push(id);
    else valueRows.set(rdataText[id]!, [id]);
  }
  const values = [...valueRows.keys()].sort();
  const vStarts = new Uint32Array(values.length + 1);
  const vType: number[] = [], vRdata: number[] = [], vFirst: number[] = [], vLast: number[] = [];
  values.forEach((v, k) => {
    vStarts[k] = vType.length;
    const ids = valueRows.get(v)!.slice().sort((a, b) => rdataType[a]! - rdataType[b]!);
    for (const id of ids) {
      let first = 0, last = 0;
      for (let j = rdataRrsetCsr.starts[id]!; j < rdataRrsetCsr.starts[id + 1]!; j++) {
        const i = rdataRrsetCsr.rows[j]!;
        first = minNonZero(first, minNonZero(tf[i]!, ztf[i]!));
        last = Math.max(last, tl[i]!, ztl[i]!);
      }
      vType.push(rdataType[id]!); vRdata.push(id); vFirst.push(first); vLast.push(last);
    }
  });
  vStarts[values.length] = vType.length;

  // ---- blobs and trigram indexes ----
  const ownersBlob = makeBlob(ownerRev);
  const namesBlob = makeBlob(flexNameList);
  const valuesBlob = makeBlob(values);
  const bailiwickBlob = makeBlob(bailiwickNames);
  const nameKeyBlob = makeBlob(nameKeys);
  const rdataTextBlob = makeBlob(rdataText);
  const wireOffsets = new Uint32Array(nRdata + 1);
  let wireTotal = 0;
  for (let id = 0; id < nRdata; id++) { wireOffsets[id] = wireTotal; wireTotal += rdataWire[id]!.length; }
  wireOffsets[nRdata] = wireTotal;
  const wireBytes = new Uint8Array(wireTotal);
  for (let id = 0; id < nRdata; id++) wireBytes.set(rdataWire[id]!, wireOffsets[id]!);
  const namesTri = buildTrigramIndex({ blob: namesBlob.bytes, offsets: namesBlob.offsets });
  const valuesTri = buildTrigramIndex({ blob: valuesBlob.bytes, offsets: valuesBlob.offsets });

  // ---- FlatBuffer ----
  const estimate = 4096 + ownersBlob.bytes.length + namesBlob.bytes.length + valuesBlob.bytes.length +
    rdataTextBlob.bytes.length + nameKeyBlob.bytes.length + wireTotal + namesTri.postings.length + valuesTri.postings.length +
    4 * (namesTri.keys.length * 2 + valuesTri.keys.length * 2) + n * 40 + nRdata * 40 + eType.length * 10 + vType.length * 14 +
    (ownerRev.length + flexNameList.length + values.length + nameKeys.length) * 12;
  assert.ok(estimate < LIMITS.shardBytesMax * 1.1, `shard of ${estimate} bytes exceeds shardBytesMax; the ingest run must split it`);
  const b = new flatbuffers.Builder(Math.min(2 ** 31 - 1, Math.ceil(estimate * 1.05)));
  const blob = (p: BlobParts) => Blob.createBlob(b, typedVector(b, p.bytes), typedVector(b, p.offsets));
  const tri = (t: TrigramIndexParts) =>
    TrigramIndex.createTrigramIndex(b, typedVector(b, t.keys), typedVector(b, t.starts), typedVector(b, t.postings));

  const fnNames = blob(namesBlob);
  const fnOwner = typedVector(b, flexOwner);
  const fnStarts = typedVector(b, entryStarts);
  const fnType = typedVector(b, Uint16Array.from(eType));
  const fnFirst = typedVector(b, Uint32Array.from(eFirst));
  const fnLast = typedVector(b, Uint32Array.from(eLast));
  const fnTri = tri(namesTri);
  FlexNames.startFlexNames(b);
  FlexNames.addNames(b, fnNames); FlexNames.addOwner(b, fnOwner); FlexNames.addEntryStarts(b, fnStarts);
  FlexNames.addEntryType(b, fnType); FlexNames.addEntryFirst(b, fnFirst); FlexNames.addEntryLast(b, fnLast);
  FlexNames.addTrigrams(b, fnTri);
  const flexNames = FlexNames.endFlexNames(b);

  const frValues = blob(valuesBlob);
  const frStarts = typedVector(b, vStarts);
  const frType = typedVector(b, Uint16Array.from(vType));
  const frRdata = typedVector(b, Uint32Array.from(vRdata));
  const frFirst = typedVector(b, Uint32Array.from(vFirst));
  const frLast = typedVector(b, Uint32Array.from(vLast));
  const frTri = tri(valuesTri);
  FlexRdata.startFlexRdata(b);
  FlexRdata.addValues(b, frValues); FlexRdata.addEntryStarts(b, frStarts); FlexRdata.addEntryType(b, frType);
  FlexRdata.addEntryRdata(b, frRdata); FlexRdata.addEntryFirst(b, frFirst); FlexRdata.addEntryLast(b, frLast);
  FlexRdata.addTrigrams(b, frTri);
  const flexRdata = FlexRdata.endFlexRdata(b);

  const rdType = typedVector(b, Uint16Array.from(rdataType));
  const rdText = blob(rdataTextBlob);
  const rdWire = typedVector(b, wireBytes);
  const rdWireOff = typedVector(b, wireOffsets);
  const rdRrStarts = typedVector(b, rdataRrsetCsr.starts);
  const rdRrRows = typedVector(b, rdataRrsetCsr.rows);
  FbRdata.startRdata(b);
  FbRdata.addRrtype(b, rdType); FbRdata.addText(b, rdText); FbRdata.addWire(b, rdWire);
  FbRdata.addWireOffsets(b, rdWireOff); FbRdata.addRrsetStarts(b, rdRrStarts); FbRdata.addRrsetRows(b, rdRrRows);
  const rdata = FbRdata.endRdata(b);

  const ixNameKeys = blob(nameKeyBlob);
  const ixNameStarts = typedVector(b, nameCsr.starts);
  const ixNameRdata = typedVector(b, nameCsr.rows);
  const ixNameFwd = typedVector(b, nameFwdOrder);
  const ixIp4Keys = typedVector(b, ip4Keys);
  const ixIp4Rdata = typedVector(b, Uint32Array.from(ip4));
  const ixIp6Keys = typedVector(b, ip6Keys);
  const ixIp6Rdata = typedVector(b, Uint32Array.from(ip6));
  const ixWire = typedVector(b, Uint32Array.from(wireOrder));
  RdataIndex.startRdataIndex(b);
  RdataIndex.addNameKeys(b, ixNameKeys); RdataIndex.addNameStarts(b, ixNameStarts); RdataIndex.addNameRdata(b, ixNameRdata);
  RdataIndex.addNameFwdOrder(b, ixNameFwd); RdataIndex.addIp4Keys(b, ixIp4Keys); RdataIndex.addIp4Rdata(b, ixIp4Rdata);
  RdataIndex.addIp6Keys(b, ixIp6Keys); RdataIndex.addIp6Rdata(b, ixIp6Rdata); RdataIndex.addWireOrder(b, ixWire);
  const rdataIndex = RdataIndex.endRdataIndex(b);

  const rsOwners = blob(ownersBlob);
  const rsOwnerStarts = typedVector(b, Uint32Array.from(ownerStartsList));
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
    stats: { rrsets: n, owners: ownerRev.length, rdata: nRdata, flexRdataValues: values.length, bytes: body.byteLength },
  };
}

/**
 * Publishes a shard body as `<dir>/<name>.rrs`: temp file, fsync, rename,
 * fsync of the directory, then a full verifying load of the final file.
 * Returns the file name (not the path). Nothing references the file until
 * the caller swaps it into the manifest.
 */
export async function writeShardFile(dir: string, body: Uint8Array, createdAt: number): Promise<string> {
  const name = `${createdAt.toString().padStart(10, '0')}-${randomBytes(6).toString('hex')}${SHARD_FILE_SUFFIX}`;
  const final = path.join(dir, name);
  const tmp = path.join(dir, `.${name}.tmp`);
  const fh = await fsp.open(tmp, 'wx');
  try {
    await fh.writev([encodeHeader(body), body]);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await fsp.rm(tmp, { force: true });
    throw err;
  } finally {
    await fh.close().catch(() => undefined);
  }
  await fsp.rename(tmp, final);
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

export async function syncDir(dir: string): Promise<void> {
  const dh = await fsp.open(dir, 'r');
  try {
    await dh.sync();
  } finally {
    await dh.close();
  }
}
