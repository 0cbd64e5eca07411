// A flexible search's time fence judges each (value, rrtype) tuple on its
// times over EVERY shard (compat.md "Values": earliest first, latest last),
// not on one shard's piece of it: "names not seen since T" must not return a
// name another shard saw yesterday. Each shard already stores its tuples'
// times (the flex entries); a scan task widens them with the entries the
// other shards hold for the same value (a binary search per shard, only for
// fenced searches), so every task decides a tuple the same way and the
// front end's union of their lines needs no times.

import { minNonZero } from '../../model/sighting.js';
import { blobLowerBound, blobRecord } from '../../shard/blob.js';
import type { FlexColumns } from '../../shard/shard-reader.js';

export class TupleTimes {
  /** Per other shard: the record holding the current value, or -1. */
  private readonly rows: Int32Array;
  /** Per other shard: where the search for the next value starts (values come in ascending order). */
  private readonly from: Uint32Array;
  first = 0;
  last = 0;

  constructor(private readonly others: readonly FlexColumns[]) {
    this.rows = new Int32Array(others.length);
    this.from = new Uint32Array(others.length);
  }

  /** Finds `value` in the other shards; values must come in ascending order. */
  seek(value: string): void {
    for (let o = 0; o < this.others.length; o++) {
      const cols = this.others[o]!;
      const k = blobLowerBound(cols, value, this.from[o]);
      this.from[o] = k;
      this.rows[o] = k < cols.offsets.length - 1 && blobRecord(cols, k) === value ? k : -1;
    }
  }

  /** The tuple's times: [first, last] of this shard's entry widened by the other shards' entries of rrtype t. */
  widen(t: number, first: number, last: number): void {
    for (let o = 0; o < this.others.length; o++) {
      const k = this.rows[o]!;
      if (k < 0) continue;
      const cols = this.others[o]!;
      for (let e = cols.entryStarts[k]!; e < cols.entryStarts[k + 1]!; e++) {
        if (cols.entryType[e] !== t) continue;
        first = minNonZero(first, cols.entryFirst[e]!);
        last = Math.max(last, cols.entryLast[e]!);
      }
    }
    this.first = first;
    this.last = last;
  }
}
