// The rdata side of a shard: each distinct rdata once, the links between
// RRsets and rdata both ways, and the inverse indexes that rdata lookups
// binary-search (target names, IPv4 and IPv6 addresses, wire forms).
//
// Everything is grouped by sorting, not by hashing: a Map keyed by fresh
// strings cost about a microsecond per record here.

import assert from 'node:assert/strict';
import { rdataTargetRange } from '../../dns/rdata-names.js';
import { reverseNameBytes } from '../../dns/name.js';
import { RR } from '../../dns/rrtype.js';
import { Column, type RrsetTable } from '../rrset-table.js';
import type { BlobView } from '../interned-blob.js';
import { sortRecords } from '../record-sort.js';
import { gatherBlob, reversedNames, sameRecord, type BlobParts } from './blobs.js';

/** Compressed rows: group g holds rows[starts[g] .. starts[g+1]). */
export interface Csr {
  starts: Uint32Array;
  rows: Uint32Array;
}

/** The shard's rdata columns, rdata numbered by first appearance in shard order. */
export interface RdataParts {
  /** Rdata ids of each RRset, in shard order. */
  rrsetRdata: Csr;
  /** RRsets of each rdata, ascending. */
  rdataRrset: Csr;
  type: Uint16Array;
  /** Presentation text of rdata id, record id of this blob. */
  textBlob: BlobParts;
  /** Wire form of rdata id: wireBytes[wireOffsets[id] .. wireOffsets[id+1]). */
  wireBytes: Uint8Array;
  wireOffsets: Uint32Array;
}

/**
 * Numbers the table's rdata by first appearance in shard order and copies
 * their columns in that numbering, so that an RRset's rdata ids and an
 * rdata's RRsets both ascend as a reader walks the shard.
 */
export function buildRdata(table: RrsetTable, order: Uint32Array): RdataParts {
  const { rrsetRdata, oldOf } = numberRdata(table, order);
  const nRdata = oldOf.length;
  const type = new Uint16Array(nRdata);
  const wireOffsets = new Uint32Array(nRdata + 1);
  const wireFrom = table.wireStarts.view();
  const arena = table.wireBytes.view();
  const wireBytes = new Uint8Array(arena.length);
  for (let id = 0, w = 0; id < nRdata; id++) {
    const old = oldOf[id]!;
    type[id] = table.rdataType(old);
    wireOffsets[id] = w;
    // A byte loop: records are a few bytes, and a subarray per record cost more than the copy.
    for (let k = wireFrom[old]!; k < wireFrom[old + 1]!; k++) wireBytes[w++] = arena[k]!;
    wireOffsets[id + 1] = w;
  }
  return {
    rrsetRdata, rdataRrset: invert(rrsetRdata, nRdata), type, textBlob: gatherBlob(table.rdataText.view(), oldOf), wireBytes, wireOffsets,
  };
}

/** Each RRset's rdata as new ids (first appearance in shard order), and the table's id of each new id. */
function numberRdata(table: RrsetTable, order: Uint32Array): { rrsetRdata: Csr; oldOf: Uint32Array } {
  const n = order.length, nRdata = table.rdataCount;
  const tRdStarts = table.rdataStarts.view(), tRdRows = table.rdataRows.view();
  const newId = new Int32Array(nRdata).fill(-1);
  const oldOf = new Uint32Array(nRdata);
  const rrsetRdata: Csr = { starts: new Uint32Array(n + 1), rows: new Uint32Array(tRdRows.length) };
  let next = 0, at = 0;
  for (let i = 0; i < n; i++) {
    const r = order[i]!;
    rrsetRdata.starts[i] = at;
    for (let j = tRdStarts[r]!; j < tRdStarts[r + 1]!; j++) {
      const old = tRdRows[j]!;
      if (newId[old] === -1) { newId[old] = next; oldOf[next++] = old; }
      rrsetRdata.rows[at++] = newId[old]!;
    }
  }
  rrsetRdata.starts[n] = at;
  assert.equal(next, nRdata, 'every interned rdata belongs to an RRset');
  return { rrsetRdata, oldOf };
}

/** The transpose of `csr` over `groups` groups; each group's rows ascend because csr's groups are visited in order. */
function invert(csr: Csr, groups: number): Csr {
  const starts = new Uint32Array(groups + 1);
  for (let j = 0; j < csr.rows.length; j++) starts[csr.rows[j]! + 1]!++;
  for (let g = 0; g < groups; g++) starts[g + 1]! += starts[g]!;
  const rows = new Uint32Array(csr.rows.length);
  const fill = starts.slice(0, groups);
  for (let i = 0; i + 1 < csr.starts.length; i++) {
    for (let j = csr.starts[i]!; j < csr.starts[i + 1]!; j++) rows[fill[csr.rows[j]!]!++] = i;
  }
  return { starts, rows };
}

/** The shard's RdataIndex table (schema/shard.fbs): sorted keys, each with the rdata ids that hold it. */
export interface RdataIndexParts {
  /** Distinct target names (reversed, sorted); the rdata naming key k are nameRdata[nameStarts[k] .. nameStarts[k+1]). */
  nameKeys: BlobParts;
  nameStarts: Uint32Array;
  nameRdata: Uint32Array;
  /** Name keys in forward-name order, for searches by a name's left end. */
  nameFwdOrder: Uint32Array;
  ip4Keys: Uint32Array;
  ip4Rdata: Uint32Array;
  /** 16 bytes per key. */
  ip6Keys: Uint8Array;
  ip6Rdata: Uint32Array;
  /** Rdata ids by (wire, rrtype). */
  wireOrder: Uint32Array;
}

/** Builds the inverse indexes from rdata to the ids that hold a target name, an address or a wire form. */
export function buildRdataIndex(rdata: RdataParts): RdataIndexParts {
  const ip4Ids: number[] = [], ip6Ids: number[] = [];
  const text = rdata.textBlob;
  // Target names, reversed, as a blob of their own (a name grows by at most one byte reversed).
  const targetBytes = Buffer.allocUnsafe(text.bytes.length + rdata.type.length);
  const targetStarts = new Column(Uint32Array);
  const targetId = new Column(Uint32Array);
  targetStarts.push(0);
  const range = new Int32Array(2);
  let w = 0;
  for (let id = 0; id < rdata.type.length; id++) {
    const t = rdata.type[id]!;
    const len = rdata.wireOffsets[id + 1]! - rdata.wireOffsets[id]!;
    if (t === RR.A && len === 4) ip4Ids.push(id);
    else if (t === RR.AAAA && len === 16) ip6Ids.push(id);
    if (rdataTargetRange(t, text.bytes, text.offsets[id]!, text.offsets[id + 1]! - 1, range)) {
      w = reverseNameBytes(text.bytes, range[0]!, range[1]!, targetBytes, w);
      targetBytes[w++] = 0x0a;
      targetStarts.push(w);
      targetId.push(id);
    }
  }
  // Address keys are the wire bytes themselves (network order sorts as numbers).
  const ip4 = sortedWireIds(rdata, ip4Ids, 4);
  const ip6 = sortedWireIds(rdata, ip6Ids, 16);
  return {
    ...targetNameIndex({ bytes: targetBytes.subarray(0, w), offsets: targetStarts.view() }, targetId.view()),
    ip4Keys: bigEndianWords(ip4.keys), ip4Rdata: ip4.ids, ip6Keys: ip6.keys, ip6Rdata: ip6.ids,
    wireOrder: sortRecords(rdata.wireBytes, rdata.wireOffsets, Uint32Array.from(rdata.type)),
  };
}

/**
 * Groups rdata by target name (reversed, so a suffix search is a prefix
 * range). Ties (one target name, several rdata) keep rdata id order:
 * sortRecords breaks ties by position and targetId ascends.
 */
function targetNameIndex(targetRev: BlobView, targetId: Uint32Array):
Pick<RdataIndexParts, 'nameKeys' | 'nameStarts' | 'nameRdata' | 'nameFwdOrder'> {
  const targetOrder = sortRecords(targetRev.bytes, targetRev.offsets);
  const keys = new Column(Uint32Array);
  const nameStarts = new Column(Uint32Array);
  const nameRdata = new Uint32Array(targetOrder.length);
  for (let k = 0; k < targetOrder.length; k++) {
    const r = targetOrder[k]!;
    if (keys.length === 0 || !sameRecord(targetRev, keys.get(keys.length - 1), targetRev, r)) {
      keys.push(r);
      nameStarts.push(k);
    }
    nameRdata[k] = targetId[r]!;
  }
  nameStarts.push(targetOrder.length);
  const nameKeys = gatherBlob(targetRev, keys.view());
  return { nameKeys, nameStarts: nameStarts.view(), nameRdata, nameFwdOrder: sortRecords(...blobArgs(reversedNames(nameKeys))) };
}

function blobArgs(b: BlobParts): [Uint8Array, Uint32Array] {
  return [b.bytes, b.offsets];
}

/** Rdata ids of fixed-size wire forms, sorted by wire then id, with their keys side by side. */
function sortedWireIds(rdata: RdataParts, ids: readonly number[], size: number): { ids: Uint32Array; keys: Uint8Array } {
  const { wireBytes, wireOffsets } = rdata;
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
}

/** 4-byte keys in network order as numbers, so the IPv4 index is searched with integer comparisons. */
function bigEndianWords(k: Uint8Array): Uint32Array {
  const words = new Uint32Array(k.length / 4);
  for (let i = 0; i < words.length; i++) {
    words[i] = ((k[i * 4]! << 24) | (k[i * 4 + 1]! << 16) | (k[i * 4 + 2]! << 8) | k[i * 4 + 3]!) >>> 0;
  }
  return words;
}
