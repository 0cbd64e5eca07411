// The order of the RRsets in a shard, stated once.
//
// Rule: a shard stores its RRsets ascending by the key
//
//   reversed owner, rrtype as 4 lower-case hex digits, bailiwick, rdata text, rdata text, ...
//
// joined by U+0001 and compared as JavaScript strings, with the rdata texts
// in the order the RRset holds its records (their wire order, see
// rrset-table.ts). Each part is printable ASCII (the writer's blobs assert
// it), so above the separator, and comparing two keys is comparing their
// parts in turn: owners by unsigned bytes, a prefix first; rrtypes as
// numbers (the same order as their fixed-width hex digits); bailiwicks by
// bytes; then the rdata texts one by one, a list before a longer list it
// begins.
//
// The writer sorts by the parts without building keys (sortRrsets and
// compareRrsetTails below), while compaction merges shards by the built key
// (shard-rrsets.ts) and a lookup merges the shards' rows by owner and key
// tail (search/lookup-search.ts builds that tail itself; rrsetKeyTail is
// the same, for it to use). These must agree byte for byte with the order
// of the RRsets stored in every shard: a k-way merge assumes each input
// ascends, and one that does not makes the merge emit RRsets out of order
// and fail to aggregate equal ones.

import { LIMITS } from '../config/limits.js';
import type { BlobView } from './interned-blob.js';

/** Joins the parts of an RRset's key; below every printable character, so a shorter part sorts first. */
export const RRSET_KEY_SEPARATOR = '\u0001';

/** rrtypeKeyText of the rrtypes below 256, made once: a merge asks for one per key it builds. */
const RRTYPE_KEY_TEXTS = Array.from({ length: 256 }, (_, t) => t.toString(16).padStart(4, '0'));

/** The rrtype part of the key: 4 lower-case hex digits, so text order is numeric order. */
export function rrtypeKeyText(rrtype: number): string {
  return RRTYPE_KEY_TEXTS[rrtype] ?? rrtype.toString(16).padStart(4, '0');
}

/** An RRset's key after its owner and separator: rrtype, bailiwick, then each rdata text. */
export function rrsetKeyTail(rrtype: number, bailiwick: string, rdataTexts: Iterable<string>): string {
  let k = `${rrtypeKeyText(rrtype)}${RRSET_KEY_SEPARATOR}${bailiwick}`;
  for (const text of rdataTexts) k += `${RRSET_KEY_SEPARATOR}${text}`;
  return k;
}

/** An RRset's whole key, from its owner name already reversed (reverseName). */
export function rrsetKey(reversedOwner: string, rrtype: number, bailiwick: string, rdataTexts: Iterable<string>): string {
  return `${reversedOwner}${RRSET_KEY_SEPARATOR}${rrsetKeyTail(rrtype, bailiwick, rdataTexts)}`;
}

/** The RRset columns the writer orders by (an RrsetTable's), with each interned bailiwick's rank in byte order. */
export interface RrsetTailColumns {
  rrtype: Uint16Array;
  bailiwick: Uint32Array;
  bailiwickRank: Uint32Array;
  rdataStarts: Uint32Array;
  rdataRows: Uint32Array;
  /** The rdata texts as a blob (each record with its newline, as an RrsetTable interns them). */
  rdataText: BlobView;
}

/**
 * Compares two RRset rows by their key tails without building them: the
 * parts of rrsetKeyTail in its order, each compared as the rule says.
 */
export function compareRrsetTails(c: RrsetTailColumns): (a: number, b: number) => number {
  const { rrtype, bailiwick, bailiwickRank, rdataStarts, rdataRows } = c;
  const { bytes, offsets } = c.rdataText;
  return (a, b) => {
    const d = rrtype[a]! - rrtype[b]! || bailiwickRank[bailiwick[a]!]! - bailiwickRank[bailiwick[b]!]!;
    if (d !== 0) return d;
    const ea = rdataStarts[a + 1]!, eb = rdataStarts[b + 1]!;
    let i = rdataStarts[a]!, j = rdataStarts[b]!;
    for (; i < ea && j < eb; i++, j++) {
      const x = rdataRows[i]!, y = rdataRows[j]!;
      if (x === y) continue;
      // Each record ends with its newline, below every printable byte, so
      // the first differing byte orders them, a prefix first, as strings.
      let p = offsets[x]!, q = offsets[y]!;
      const pe = offsets[x + 1]!;
      while (p < pe && bytes[p] === bytes[q]) { p++; q++; }
      if (p < pe) return bytes[p]! - bytes[q]!;
    }
    return (ea - i) - (eb - j);
  };
}

/** RRset rows in shard order, grouped by owner. */
export interface RrsetOrder {
  /** order[i] is the row of the i-th RRset in the shard. */
  order: Uint32Array;
  /** The RRsets of the owner of rank k are order[ownerStarts[k] .. ownerStarts[k+1]). */
  ownerStarts: Uint32Array;
}

/**
 * Puts RRset rows in the rule's order, given each row's owner and each
 * owner's rank by reversed name. A counting sort on the owner's rank does
 * the bulk in linear time (a comparator sort over all RRsets was the
 * writer's largest single cost); each owner's few RRsets are then sorted
 * by their tails, by insertion when there are few.
 */
export function sortRrsets(owner: Uint32Array, ownerRank: Uint32Array, compareTails: (a: number, b: number) => number): RrsetOrder {
  const n = owner.length, nOwners = ownerRank.length;
  const insertionMax = LIMITS.insertionSortRrsetsMax;
  const ownerStarts = new Uint32Array(nOwners + 1);
  for (let r = 0; r < n; r++) ownerStarts[ownerRank[owner[r]!]! + 1]!++;
  for (let k = 0; k < nOwners; k++) ownerStarts[k + 1]! += ownerStarts[k]!;
  const order = new Uint32Array(n);
  const cursor = ownerStarts.slice(0, nOwners);
  for (let r = 0; r < n; r++) order[cursor[ownerRank[owner[r]!]!]!++] = r;
  for (let k = 0; k < nOwners; k++) {
    const from = ownerStarts[k]!, to = ownerStarts[k + 1]!;
    if (to - from > insertionMax) order.subarray(from, to).sort(compareTails);
    else if (to - from > 1) insertionSort(order, from, to, compareTails);
  }
  return { order, ownerStarts };
}

/** Sorts `a[from..to)` in place; for the handful of RRsets one owner has. */
function insertionSort(a: Uint32Array, from: number, to: number, compare: (x: number, y: number) => number): void {
  for (let i = from + 1; i < to; i++) {
    const v = a[i]!;
    let j = i - 1;
    for (; j >= from && compare(a[j]!, v) > 0; j--) a[j + 1] = a[j]!;
    a[j + 1] = v;
  }
}
