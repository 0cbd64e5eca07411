// Planning a flexible search over the local shards: which shards can hold a
// match at all, and how each is cut into record ranges for the workers.

import { LIMITS } from '../../config/limits.js';
import { STREAM_MESSAGES } from '../../errors/catalogue.js';
import type { TimeFence } from '../../model/filters.js';
import { ALL, type TrigramQuery } from '../../model/trigram-query.js';
import type { FlexQuery } from '../../query/flex-query.js';
import { compilePattern } from '../../query/pattern.js';
import { blobLength } from '../../shard/blob.js';
import type { ShardReader } from '../../shard/shard-reader.js';
import { mayMatch } from '../../shard/trigram-index.js';

/** Records [from, to) of one shard's flex column: one scan task's range. */
export interface FlexPlanPart {
  shard: ShardReader;
  from: number;
  to: number;
}

/** What the front end learns from compiling a query's patterns once. */
export interface FlexPatterns {
  /** RE2's own words when the pattern or exclude does not compile (an in-stream `failed`). */
  error: string | undefined;
  /**
   * The pattern gives the trigram index something to work with. Such a
   * search is not split into ranges: each range's task would evaluate the
   * same posting lists of the whole shard again (the selective class cost a
   * third more at 10 M names).
   */
  indexable: boolean;
  /** The pattern's trigram query, for pruning shards that cannot match. */
  trigrams: TrigramQuery;
}

/** Compiles the pattern and exclude here, once; workers compile again (and cache) on their side. */
export function compileFlex(q: FlexQuery): FlexPatterns {
  try {
    const main = compilePattern(q.method, q.pattern);
    if (q.exclude !== undefined) compilePattern(q.method, q.exclude);
    return { error: undefined, indexable: main.trigrams.op !== 'all', trigrams: main.trigrams };
  } catch (err) {
    const msg = (err as { code?: string }).code === 'BAD_PATTERN' ? (err as Error).message : STREAM_MESSAGES.INTERNAL;
    return { error: msg, indexable: false, trigrams: ALL };
  }
}

/** Where a flexible search runs. */
export interface FlexPlanShape {
  /** One list of ranges per shard to scan, in shard order. */
  parts: FlexPlanPart[][];
  /**
   * Every shard that may hold a matching value (its trigrams allow it),
   * scanned or not: a fenced search judges a value's times over all of them.
   */
  candidates: ShardReader[];
}

/**
 * Prunes the shards that cannot contribute a result and cuts the rest into
 * ranges. A shard whose whole time range lies outside a lastAfter or
 * firstBefore fence is not scanned: a value only it holds fails the fence,
 * and a value others hold too is found, and judged with this shard's times,
 * through them.
 */
export function planFlex(q: FlexQuery, patterns: FlexPatterns, fence: TimeFence, shards: readonly ShardReader[],
  threads: number): FlexPlanShape {
  const candidates: ShardReader[] = [];
  const parts: FlexPlanPart[][] = [];
  for (const shard of shards) {
    const cols = q.target === 'rrnames' ? shard.flexNames : shard.flexRdata;
    const records = blobLength(cols);
    if (records === 0) continue;
    // A shard whose index lacks a trigram the pattern needs gets no task:
    // at 10 M names the selective class touched one shard of three.
    if (patterns.indexable && !mayMatch(cols.trigrams, patterns.trigrams)) continue;
    candidates.push(shard);
    if (fence.lastAfter !== undefined && shard.timeMax <= fence.lastAfter) continue;
    if (fence.firstBefore !== undefined && shard.timeMin >= fence.firstBefore) continue;
    parts.push(rangesOf(shard, records, patterns.indexable ? 1 : threads));
  }
  return { parts, candidates };
}

/** A shard's records cut into at most `parts` ranges of at least LIMITS.scanSplitRecordsMin records. */
function rangesOf(shard: ShardReader, records: number, parts: number): FlexPlanPart[] {
  const n = Math.max(1, Math.min(parts, Math.floor(records / LIMITS.scanSplitRecordsMin)));
  const step = Math.ceil(records / n);
  const list: FlexPlanPart[] = [];
  for (let from = 0; from < records; from += step) list.push({ shard, from, to: Math.min(records, from + step) });
  return list;
}
