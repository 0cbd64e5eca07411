// Binary search over a sorted blob (see the blob convention in shard.fbs).
// Comparisons run on the mapped bytes in place, in a JS loop: a name differs
// from its neighbours within a few bytes, and Buffer#compare's argument
// checks and native call cost more than that loop (it was the largest single
// cost of an exact lookup: 22 steps per shard).

import type { BlobColumns } from './shard-reader.js';

/** Sign of record [start, end) of `bytes` against `key`, a shorter prefix first. */
function compareRecord(bytes: Uint8Array, start: number, end: number, key: Uint8Array): number {
  const len = end - start;
  const n = len < key.length ? len : key.length;
  for (let i = 0; i < n; i++) {
    const d = bytes[start + i]! - key[i]!;
    if (d !== 0) return d;
  }
  return len - key.length;
}

/** First record index whose bytes are >= key. */
export function lowerBound(b: BlobColumns, key: Uint8Array, lo = 0, hi = b.offsets.length - 1): number {
  const bytes = b.blob;
  const offsets = b.offsets;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareRecord(bytes, offsets[mid]!, offsets[mid + 1]! - 1, key) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Record range [from, to) of records that start with `prefix` (printable ASCII). */
export function prefixRange(b: BlobColumns, prefix: string): [number, number] {
  const from = lowerBound(b, Buffer.from(prefix, 'latin1'));
  // 0x7F sorts after every byte a record may hold (0x20..0x7E).
  const to = lowerBound(b, Buffer.from(prefix + '\x7f', 'latin1'), from);
  return [from, to];
}

/** Index of the record equal to key, or -1. */
export function findExact(b: BlobColumns, key: string): number {
  const k = Buffer.from(key, 'latin1');
  const i = lowerBound(b, k);
  if (i >= b.offsets.length - 1) return -1;
  return compareRecord(b.blob, b.offsets[i]!, b.offsets[i + 1]! - 1, k) === 0 ? i : -1;
}

/**
 * True when `rest` (what follows a matched prefix) is exactly one more label
 * with its trailing dot. Escaped dots (`\.`) do not end a label.
 */
export function isOneLabel(rest: string): boolean {
  if (rest.length < 2 || rest[rest.length - 1] !== '.') return false;
  for (let i = 0; i < rest.length - 1; i++) {
    const c = rest[i];
    if (c === '\\') i++;
    else if (c === '.') return false;
  }
  return true;
}
