// Planning a flexible search over the local shards: which shards can hold a
// match at all, and how the values are cut into ranges, one scan task each.

import { LIMITS } from '../../config/limits.js';
import { isFenced, type TimeFence } from '../../model/filters.js';
import type { FlexQuery } from '../../query/flex-query.js';
import type { FlexPatterns } from '../flex-patterns.js';
import { blobLength, blobRecord } from '../../shard/blob.js';
import type { FlexColumns, ShardReader } from '../../shard/shard-reader.js';
import { mayMatch } from '../../shard/trigram-index.js';

/** Values [from, to) of a search: one scan task's range (to undefined = the end). */
export interface FlexRange {
  from: string;
  to: string | undefined;
}

/** Where a flexible search runs. */
export interface FlexPlanShape {
  /** Value ranges in ascending order that together cover every value: one scan task each, over every scanned shard. */
  ranges: FlexRange[];
  /** The shards to scan, in shard order. */
  scanned: ShardReader[];
  /**
   * Shards that may hold a matching value (their trigrams allow it) but are
   * not scanned (their times lie outside the fence): a fenced search judges
   * a value's times over them too.
   */
  others: ShardReader[];
}

/**
 * Prunes the shards that cannot contribute a result and cuts the values into
 * ranges, one per thread, when the pattern needs a full scan. A shard whose
 * whole time range lies outside a lastAfter or firstBefore fence is not
 * scanned: a value only it holds fails the fence, and a value others hold
 * too is found, and judged with this shard's times, through them.
 */
export function planFlex(q: FlexQuery, patterns: FlexPatterns, fence: TimeFence, shards: readonly ShardReader[],
  threads: number): FlexPlanShape {
  const scanned: ShardReader[] = [];
  const others: ShardReader[] = [];
  for (const shard of shards) {
    const cols = columnsOf(q, shard);
    if (blobLength(cols) === 0) continue;
    // A shard whose index lacks a trigram the pattern needs is not scanned:
    // at 10 M names the selective class touched one shard of three.
    if (patterns.indexable && !mayMatch(cols.trigrams, patterns.trigrams)) continue;
    const outside = (fence.lastAfter !== undefined && shard.timeMax <= fence.lastAfter) ||
      (fence.firstBefore !== undefined && shard.timeMin >= fence.firstBefore);
    (outside ? others : scanned).push(shard);
  }
  // A pattern the index narrows reads few records: one task, and the
  // candidate lists are evaluated once. A full scan is cut by value into a
  // range per thread.
  const ranges = patterns.indexable ? [{ from: '', to: undefined }] : rangesOf(q, scanned, threads);
  return { ranges, scanned, others: isFenced(fence) ? others : [] };
}

const columnsOf = (q: FlexQuery, s: ShardReader) => (q.target === 'rrnames' ? s.flexNames : s.flexRdata);

/**
 * At most `parts` value ranges of about equal size, cut at values of the
 * largest scanned shard (values spread alike over shards that compaction
 * cut by range or that ingest filled in time), each of at least
 * LIMITS.scanSplitRecordsMin records of it.
 */
function rangesOf(q: FlexQuery, shards: readonly ShardReader[], parts: number): FlexRange[] {
  let biggest: FlexColumns | undefined;
  let records = 0;
  for (const s of shards) {
    const cols = columnsOf(q, s);
    records += blobLength(cols);
    if (biggest === undefined || blobLength(cols) > blobLength(biggest)) biggest = cols;
  }
  const n = biggest === undefined ? 1 : Math.max(1, Math.min(parts, Math.floor(records / LIMITS.scanSplitRecordsMin)));
  const cuts: string[] = [''];
  for (let k = 1; k < n; k++) {
    const cut = blobRecord(biggest!, Math.floor((blobLength(biggest!) * k) / n));
    if (cut > cuts.at(-1)!) cuts.push(cut);
  }
  return cuts.map((from, i) => ({ from, to: cuts[i + 1] }));
}
