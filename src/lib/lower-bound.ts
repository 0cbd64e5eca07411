// Binary search, written once. Every sorted structure in a shard (blobs,
// address keys, trigram keys, CSR start arrays) is searched through these.

/**
 * First index i in [lo, hi) for which `before(i)` is false, or hi. `before`
 * must hold on a prefix of the range and not after it.
 */
export function partitionPoint(lo: number, hi: number, before: (i: number) => boolean): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (before(mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * First index in [lo, hi) of an ascending numeric array whose value is >=
 * `value` (or > `value` when `strict`), or hi. A typed-array loop rather than
 * partitionPoint: it runs once per regex hit in a scan.
 */
export function lowerBound(a: ArrayLike<number>, value: number, lo = 0, hi = a.length, strict = false): number {
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid]! < value || (strict && a[mid] === value)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * The run that position `pos` falls in, for a CSR start array (`starts`
 * ascending, run r = [starts[r], starts[r + 1])): the last r in [lo, hi)
 * with starts[r] <= pos.
 */
export function runOf(starts: ArrayLike<number>, pos: number, lo = 0, hi = starts.length): number {
  return lowerBound(starts, pos, lo, hi, true) - 1;
}
