// Blobs, the shard's string columns (see the blob convention in
// schema/shard.fbs), and sorting strings through them.
//
// The writer sorts names and values as byte records with native/sort.cc
// (five to ten times faster than V8 sorting the strings), and a string
// column is stored as the sorted blob anyway, so one sort gives both the
// order and the column.

import assert from 'node:assert/strict';
import { LIMITS } from '../../config/limits.js';
import { reverseNameBytes } from '../../dns/name.js';
import { gatherRecords, sortRecords } from '../record-sort.js';
import type { BlobView } from '../interned-blob.js';

/** Records joined with a trailing newline each; record i is bytes[offsets[i] .. offsets[i+1]). */
export interface BlobParts {
  bytes: Buffer;
  offsets: Uint32Array;
}

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
  // A batch at a time: one join and one write per batch, not per record.
  const batch = LIMITS.blobWriteBatchRecords;
  for (let i = 0; i < n; i += batch) {
    const joined = `${records.slice(i, i + batch).join('\n')}\n`;
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

/** Records in the shard's byte order: order[k] is the index of the k-th smallest; `sorted` is their blob in that order. */
export interface SortedBlob {
  order: Uint32Array;
  sorted: BlobParts;
}

/**
 * The sorted order of a blob's records (printable ASCII, each with its
 * newline) by the shard's byte order, and the blob of them in that order.
 * Equal records are ordered by `tiebreak`, then by position.
 */
export function sortBlob(blob: BlobView, tiebreak?: Uint32Array): SortedBlob {
  const order = sortRecords(blob.bytes, blob.offsets, tiebreak);
  return { order, sorted: gatherBlob(blob, order) };
}

/** The records ids[0], ids[1], ... of a blob as a blob of their own (copied natively: native/sort.cc). */
export function gatherBlob(blob: BlobView, ids: Uint32Array): BlobParts {
  const at = blob.offsets;
  const n = ids.length;
  let total = 0;
  for (let k = 0; k < n; k++) total += at[ids[k]! + 1]! - at[ids[k]!]!;
  const bytes = Buffer.allocUnsafe(total);
  const offsets = new Uint32Array(n + 1);
  gatherRecords(blob.bytes, at, ids, bytes, offsets);
  return { bytes, offsets };
}

/** Whether records i of `a` and j of `b` hold the same bytes. */
export function sameRecord(a: BlobView, i: number, b: BlobView, j: number): boolean {
  let p = a.offsets[i]!, q = b.offsets[j]!;
  const pe = a.offsets[i + 1]!;
  if (pe - p !== b.offsets[j + 1]! - q) return false;
  for (; p < pe; p++, q++) if (a.bytes[p] !== b.bytes[q]) return false;
  return true;
}

/** A blob of names with each record's labels reversed (reverseNameBytes), in the same order. */
export function reversedNames(blob: BlobView): BlobParts {
  const { bytes: src, offsets: at } = blob;
  const n = at.length - 1;
  // Reversing adds at most one byte (a dot where the name had none at its end).
  const bytes = Buffer.allocUnsafe(src.length + n);
  const offsets = new Uint32Array(n + 1);
  let w = 0;
  for (let i = 0; i < n; i++) {
    offsets[i] = w;
    w = reverseNameBytes(src, at[i]!, at[i + 1]! - 1, bytes, w);
    bytes[w++] = 0x0a;
  }
  offsets[n] = w;
  return { bytes: bytes.subarray(0, w), offsets };
}

/** The rank of each index in a sorted order: the inverse permutation. */
export function ranksOf(order: Uint32Array): Uint32Array {
  const rank = new Uint32Array(order.length);
  for (let k = 0; k < order.length; k++) rank[order[k]!] = k;
  return rank;
}
