// Binary search over a sorted blob (see the blob convention in shard.fbs).
// Comparisons run on the mapped bytes in place, in a JS loop: a name differs
// from its neighbours within a few bytes, and Buffer#compare's argument
// checks and native call cost more than that loop (it was the largest single
// cost of an exact lookup: 22 steps per shard).

/**
 * A blob of newline-terminated records and where each starts: record i is
 * blob[offsets[i] .. offsets[i+1] - 1), its newline excluded.
 */
export interface BlobColumns {
  /** Buffer over the mapping (RE2 needs Buffers, never strings). */
  blob: Buffer;
  offsets: Uint32Array;
}

/** Sign of record [start, end) of `bytes` against key[0 .. keyLen), a shorter prefix first. */
function compareRecord(bytes: Uint8Array, start: number, end: number, key: Uint8Array, keyLen: number): number {
  const len = end - start;
  const n = len < keyLen ? len : keyLen;
  for (let i = 0; i < n; i++) {
    const d = bytes[start + i]! - key[i]!;
    if (d !== 0) return d;
  }
  return len - keyLen;
}

/** First record index whose bytes are >= key[0 .. keyLen). */
function lowerBoundBytes(b: BlobColumns, key: Uint8Array, keyLen: number, lo: number, hi: number): number {
  const bytes = b.blob;
  const offsets = b.offsets;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareRecord(bytes, offsets[mid]!, offsets[mid + 1]! - 1, key, keyLen) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
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

/** First record index whose bytes are >= key (printable ASCII). */
export function lowerBound(b: BlobColumns, key: string, lo = 0, hi = b.offsets.length - 1): number {
  return lowerBoundBytes(b, scratch, encodeKey(key), lo, hi);
}

/** Record range [from, to) of records that start with `prefix` (printable ASCII). */
export function prefixRange(b: BlobColumns, prefix: string): [number, number] {
  const from = lowerBound(b, prefix);
  // 0x7F sorts after every byte a record may hold (0x20..0x7E).
  const to = lowerBound(b, prefix + '\x7f', from);
  return [from, to];
}

/** Index of the record equal to key, or -1. */
export function findExact(b: BlobColumns, key: string): number {
  const n = encodeKey(key);
  const i = lowerBoundBytes(b, scratch, n, 0, b.offsets.length - 1);
  if (i >= b.offsets.length - 1) return -1;
  return compareRecord(b.blob, b.offsets[i]!, b.offsets[i + 1]! - 1, scratch, n) === 0 ? i : -1;
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
