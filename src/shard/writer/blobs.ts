// Blobs, the shard's string columns (see the blob convention in
// schema/shard.fbs), and sorting strings through them.
//
// The writer sorts names and values as byte records with native/sort.cc
// (five to ten times faster than V8 sorting the strings), and a string
// column is stored as the sorted blob anyway, so one sort gives both the
// order and the column.

import assert from 'node:assert/strict';
import { LIMITS } from '../../config/limits.js';
import { sortRecords } from '../record-sort.js';

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

/** Strings in the shard's byte order: order[k] is the index of the k-th smallest; `sorted` is their blob in that order. */
export interface SortedBlob {
  order: Uint32Array;
  sorted: BlobParts;
}

/** Sorted order of strings (printable ASCII) by the shard's byte order. */
export function sortedOrder(keys: readonly string[], tiebreak?: Uint32Array): Uint32Array {
  return sortedBlob(keys, tiebreak).order;
}

/**
 * The sorted order of strings and the blob of them in that order. The sorted
 * blob is the unsorted one with its records moved, not the strings encoded
 * and checked a second time.
 */
export function sortedBlob(keys: readonly string[], tiebreak?: Uint32Array): SortedBlob {
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

/** The rank of each index in a sorted order: the inverse permutation. */
export function ranksOf(order: Uint32Array): Uint32Array {
  const rank = new Uint32Array(order.length);
  for (let k = 0; k < order.length; k++) rank[order[k]!] = k;
  return rank;
}
