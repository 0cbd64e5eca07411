// The watch matcher's thread (workers/watch-match.ts): one task per target
// per snapshot the local watch feed matches (local-watch-feed.ts), run here
// so that compiling the watches' RE2.Sets and running them over a published
// shard never hold the front end's thread: it gets back only the records
// that some pattern matched, and the patterns' ids.
//
// Protocol. The thread keeps the patterns (watch-patterns.ts IdPatterns,
// warm DFAs and all) between tasks. A task names the registry's version; it
// carries the list only when the feed's last task sent another version, and
// a thread that has not got that version (it was restarted) answers
// `needPatterns`, and the feed sends the task again with the list. Shards
// cross as handles (their mappings are shared, never copied) and are kept
// attached between tasks, as the scan workers keep theirs
// (flex-scan.ts WorkerCache: dropped when the front end retires them).
//
// What a task does for each added shard: skips the records whose every
// rrtype a shard that left the snapshot holds for the same value (one
// galloping walk of the sorted blobs: a compaction's output, all of it old,
// costs no pattern match), and those with no entry first seen at or after
// `floor`; matches the rest against every pattern.

import type { ShardHandle } from '../../shard/shard-reader.js';
import type { FlexColumns } from '../../shard/shard-reader.js';
import { blobLength, compareRecords, gallopTo } from '../../shard/blob.js';
import { IdPatterns, type PatternEntry } from '../watch-patterns.js';
import { WorkerCache } from './flex-scan.js';

/** Records one RE2.Set test covers on this thread (watch-patterns.ts PatternIndex). */
const RANGE_RECORDS = 1_024;

export interface WatchMatchTask {
  target: 'rrnames' | 'rdata';
  /** The registry's version of the patterns; `patterns` is its list, when the thread may not have it. */
  version: number;
  patterns?: PatternEntry[];
  /** Entries first seen before this interest no watch. */
  floor: number;
  /** The shards new in the snapshot, and those that left it. */
  added: ShardHandle[];
  gone: ShardHandle[];
}

/** The matches in one added shard: hit k is record records[k], matched by patterns ids[starts[k] .. starts[k + 1]). */
export interface ShardHits {
  records: Uint32Array;
  starts: Uint32Array;
  ids: Uint32Array;
}

export type WatchMatchResult =
  | { needPatterns: true }
  | {
    needPatterns?: undefined;
    /** One per added shard, in order. */
    shards: ShardHits[];
    /** Records matched against the patterns (the others were old or too old). */
    records: number;
    /** This thread's time on the task (ms). */
    ms: number;
  };

/** Whether row `k` of `cols` has an entry of rrtype `t`. */
function hasType(cols: FlexColumns, k: number, t: number): boolean {
  for (let e = cols.entryStarts[k]!; e < cols.entryStarts[k + 1]!; e++) if (cols.entryType[e] === t) return true;
  return false;
}

/** Whether record `rec` has an entry first seen at or after `since`. */
function seenSince(cols: FlexColumns, rec: number, since: number): boolean {
  for (let e = cols.entryStarts[rec]!; e < cols.entryStarts[rec + 1]!; e++) if (cols.entryFirst[e]! >= since) return true;
  return false;
}

/** Marks (1) the records of `cols` whose every rrtype some shard of `gone` holds for the same value. */
function heldBy(cols: FlexColumns, gone: readonly FlexColumns[]): Uint8Array | undefined {
  if (gone.length === 0) return undefined;
  const n = blobLength(cols);
  const marks = new Uint8Array(n);
  const at = new Uint32Array(gone.length);
  const holders: number[] = [];
  for (let rec = 0; rec < n; rec++) {
    holders.length = 0;
    for (let j = 0; j < gone.length; j++) {
      const g = gone[j]!;
      at[j] = gallopTo(g, at[j]!, cols, rec);
      if (at[j]! < blobLength(g) && compareRecords(g, at[j]!, cols, rec) === 0) holders.push(j);
    }
    if (holders.length === 0) continue;
    let all = true;
    for (let e = cols.entryStarts[rec]!; e < cols.entryStarts[rec + 1]! && all; e++) {
      const t = cols.entryType[e]!;
      all = false;
      for (const j of holders) if (hasType(gone[j]!, at[j]!, t)) all = true;
    }
    if (all) marks[rec] = 1;
  }
  return marks;
}

/** What a matcher thread keeps between tasks. */
export class WatchMatchThread {
  /** Long ranges: this thread holds no one up. */
  private readonly patterns = { rrnames: new IdPatterns(RANGE_RECORDS), rdata: new IdPatterns(RANGE_RECORDS) };
  private readonly cache = new WorkerCache();

  run(task: WatchMatchTask): WatchMatchResult {
    const started = performance.now();
    const patterns = this.patterns[task.target];
    if (task.patterns !== undefined) patterns.sync(task.version, task.patterns);
    if (patterns.version !== task.version) return { needPatterns: true };
    patterns.prepareAll();
    const columnsOf = (h: ShardHandle): FlexColumns => {
      const s = this.cache.shard(h);
      return task.target === 'rrnames' ? s.flexNames : s.flexRdata;
    };
    const gone = task.gone.map(columnsOf);
    let records = 0;
    const shards = task.added.map((h): ShardHits => {
      const cols = columnsOf(h);
      const old = heldBy(cols, gone);
      const floor = task.floor;
      const out = { records: [] as number[], starts: [] as number[], ids: [] as number[] };
      const n = blobLength(cols);
      patterns.matchInto(cols, 0, n, (rec) => {
        if ((old !== undefined && old[rec] === 1) || !seenSince(cols, rec, floor)) return false;
        records++;
        return true;
      }, out);
      out.starts.push(out.ids.length);
      return { records: Uint32Array.from(out.records), starts: Uint32Array.from(out.starts), ids: Uint32Array.from(out.ids) };
    });
    return { shards, records, ms: performance.now() - started };
  }
}
