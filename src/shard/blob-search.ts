// Binary search over a sorted blob (see the blob convention in shard.fbs).
// Comparisons run on the mapped bytes in place: Buffer#compare with ranges
// allocates nothing.

import type { BlobColumns } from './shard-reader.js';

/** First record index whose bytes are >= key. */
export function lowerBound(b: BlobColumns, key: Buffer, lo = 0, hi = b.offsets.length - 1): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    const c = b.blob.compare(key, 0, key.length, b.offsets[mid]!, b.offsets[mid + 1]! - 1);
    if (c < 0) lo = mid + 1;
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
  return b.blob.compare(k, 0, k.length, b.offsets[i]!, b.offsets[i + 1]! - 1) === 0 ? i : -1;
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
