// Blobs: the shard format's sorted string columns (see the blob convention in
// schema/shard.fbs), and binary search over them.
//
// Comparisons run on the mapped bytes in place, in a JS loop: a name differs
// from its neighbours within a few bytes, and Buffer#compare's argument
// checks and native call cost more than that loop (it was the largest single
// cost of an exact lookup: 22 steps per shard).

import { partitionPoint } from '../lib/lower-bound.js';

/**
 * A blob of newline-terminated records and where each starts: record i is
 * blob[offsets[i] .. offsets[i+1] - 1), its newline excluded.
 */
export interface BlobColumns {
  /** Buffer over the mapping (RE2 needs Buffers, never strings). */
  blob: Buffer;
  offsets: Uint32Array;
}

/** Record i of a blob as a string (latin1 is exact: records are ASCII). */
export function blobRecord(b: BlobColumns, i: number): string {
  return b.blob.toString('latin1', b.offsets[i], b.offsets[i + 1]! - 1);
}

/** Records in the blob. */
export function blobLength(b: BlobColumns): number {
  return b.offsets.length - 1;
}

/** Sign of record i of `b` against key[0 .. keyLen), a shorter prefix first. */
function compareRecord(b: BlobColumns, i: number, key: Uint8Array, keyLen: number): number {
  const bytes = b.blob;
  const start = b.offsets[i]!;
  const len = b.offsets[i + 1]! - 1 - start;
  const n = len < keyLen ? len : keyLen;
  for (let j = 0; j < n; j++) {
    const d = bytes[start + j]! - key[j]!;
    if (d !== 0) return d;
  }
  return len - keyLen;
}

/**
 * Sign of record i of `a` against record j of `b` (bytewise, a shorter
 * prefix first): two shards' values compared in place. Each record ends with
 * its newline, below every byte a record holds, so one loop to the first
 * difference also orders a prefix first.
 */
export function compareRecords(a: BlobColumns, i: number, b: BlobColumns, j: number): number {
  const x = a.blob, y = b.blob;
  let p = a.offsets[i]!, q = b.offsets[j]!;
  const pe = a.offsets[i + 1]!;
  while (p < pe && x[p] === y[q]) {
    p++;
    q++;
  }
  return p < pe ? x[p]! - y[q]! : 0;
}

/**
 * The first record of `b` at or after `from` that is >= record i of `a`:
 * galloping from `from` (1, 2, 4... records, then a binary search), so
 * that walking one sorted blob through another costs about the shorter's
 * length in steps, whichever is longer.
 */
export function gallopTo(b: BlobColumns, from: number, a: BlobColumns, i: number): number {
  const n = b.offsets.length - 1;
  let lo = from;
  let step = 1;
  let hi = from;
  while (hi < n && compareRecords(b, hi, a, i) < 0) {
    lo = hi + 1;
    hi = from + step;
    step *= 2;
  }
  return partitionPoint(lo, Math.min(hi, n), (k) => compareRecords(b, k, a, i) < 0);
}

// Search keys are encoded into this scratch array rather than a fresh
// Buffer each: an exact lookup searches every shard, and the allocations
// showed in its profile. Single-threaded use only (each thread has its own).
let scratch = new Uint8Array(1024);

/** Latin-1 bytes of `key` (what Buffer.from(key, 'latin1') gives) in the scratch array; returns the length. */
function encodeKey(key: string): number {
  if (key.length > scratch.length) scratch = new Uint8Array(key.length * 2);
  for (let i = 0; i < key.length; i++) scratch[i] = key.charCodeAt(i) & 0xff;
  return key.length;
}

/** First record index in [lo, hi) whose bytes are >= key (printable ASCII). */
export function blobLowerBound(b: BlobColumns, key: string, lo = 0, hi = blobLength(b)): number {
  const n = encodeKey(key);
  return partitionPoint(lo, hi, (i) => compareRecord(b, i, scratch, n) < 0);
}

/** Record range [from, to) of records that start with `prefix` (printable ASCII). */
export function prefixRange(b: BlobColumns, prefix: string): [number, number] {
  const from = blobLowerBound(b, prefix);
  // 0x7F sorts after every byte a record may hold (0x20..0x7E).
  const to = blobLowerBound(b, prefix + '\x7f', from);
  return [from, to];
}

/** Index of the record equal to key, or -1. */
export function findExact(b: BlobColumns, key: string): number {
  const i = blobLowerBound(b, key);
  if (i >= blobLength(b)) return -1;
  return compareRecord(b, i, scratch, encodeKey(key)) === 0 ? i : -1;
}
