// Native sort of byte-string records (native/sort.cc), for the shard writer.
//
// The order is the shard format's: unsigned bytes, a record before any record
// it is a prefix of; for the printable ASCII of names and rdata text that is
// JavaScript's own string order, which the readers' binary searches use.
// Equal records are ordered by `tiebreak` (when given), then by position, so
// the result is total and repeatable.

import { loadAddon } from '../lib/native.js';

interface SortAddon {
  sortRecords(bytes: Uint8Array, offsets: Uint32Array, tiebreak?: Uint32Array): Uint32Array;
  gatherRecords(bytes: Uint8Array, offsets: Uint32Array, ids: Uint32Array, outBytes: Uint8Array, outOffsets: Uint32Array): void;
}

const addon = loadAddon<SortAddon>('rrscan_sort');

/**
 * Record i is bytes[offsets[i] .. offsets[i+1]); returns the record indexes
 * in sorted order.
 */
export function sortRecords(bytes: Uint8Array, offsets: Uint32Array, tiebreak?: Uint32Array): Uint32Array {
  return addon.sortRecords(bytes, offsets, tiebreak);
}

/**
 * Copies records ids[0], ids[1], ... of the blob (bytes, offsets) one after
 * the other into outBytes (sized by the caller to their total) and their
 * starts, plus the end, into outOffsets (ids.length + 1 entries).
 */
export function gatherRecords(bytes: Uint8Array, offsets: Uint32Array, ids: Uint32Array, outBytes: Uint8Array,
  outOffsets: Uint32Array): void {
  addon.gatherRecords(bytes, offsets, ids, outBytes, outOffsets);
}
