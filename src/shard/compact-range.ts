// One thread's part of a compaction (compactor.ts): a range of owner
// names, merged from every input shard and written to new shard files that
// the calling thread publishes. Run on the calling thread when the merge
// is small, else on a compaction thread (workers/compact.ts), which
// imports this module and nothing that starts threads.

import path from 'node:path';
import { rm } from 'node:fs/promises';
import { blobLowerBound } from './blob.js';
import { SHARD_HEADER_BYTES } from './format.js';
import type { ShardEntry } from './manifest.js';
import { releaseMapping } from './mapped-file.js';
import { RrsetTable } from './rrset-table.js';
import { mergeShardRrsets } from './shard-merge.js';
import { ShardReader, type ShardHandle } from './shard-reader.js';
import { buildShard, writeShardFile } from './shard-writer.js';

/** One thread's part of a compaction: owners in [from, to) of every input, by reversed name. */
export interface CompactRange {
  dataDir: string;
  /**
   * The inputs: mapped and verified once by the caller and shared
   * (ShardReader.attach), or paths that the merging thread opens, checks
   * and unmaps when done.
   */
  shards: readonly (ShardHandle | string)[];
  /** Reversed owner names; undefined = the start or the end of the key space. */
  from: string | undefined;
  to: string | undefined;
  shardRrsetsMax: number;
  now: number;
  label: string;
  /** The run's WriterLock id (file-lock.ts). */
  writer: string;
}

export interface CompactRangeResult {
  written: ShardEntry[];
  rrsetsIn: number;
}

/** Merges one range of owners of every input into new shard files; deletes what it wrote if it fails. */
export async function compactRange(t: CompactRange): Promise<CompactRangeResult> {
  const readers = t.shards.map((h) => (typeof h === 'string' ? ShardReader.open(h) : ShardReader.attach(h)));
  try {
    return await mergeRange(t, readers);
  } finally {
    // What this thread mapped, it unmaps now: the inputs are deleted at the swap.
    t.shards.forEach((h, i) => (typeof h === 'string' ? releaseMapping(readers[i]!.buffer) : undefined));
  }
}

async function mergeRange(t: CompactRange, readers: readonly ShardReader[]): Promise<CompactRangeResult> {
  const written: ShardEntry[] = [];
  let batch = new RrsetTable();
  let rrsetsIn = 0;
  const flush = async () => {
    if (batch.size === 0) return;
    const { body, stats } = buildShard(batch, t.label, t.now);
    batch = new RrsetTable();
    const file = await writeShardFile(t.dataDir, body, t.now, t.writer);
    written.push({ file, rrsets: stats.rrsets, bytes: body.byteLength + SHARD_HEADER_BYTES, createdAt: t.now, source: t.label });
  };
  try {
    const from = readers.map((r) => (t.from === undefined ? 0 : blobLowerBound(r.owners, t.from)));
    const to = readers.map((r) => (t.to === undefined ? r.owners.offsets.length - 1 : blobLowerBound(r.owners, t.to)));
    await mergeShardRrsets(readers, from, to, () => batch, (folded) => {
      rrsetsIn += folded;
      return batch.size >= t.shardRrsetsMax ? flush() : undefined;
    });
    await flush();
  } catch (err) {
    for (const w of written) await rm(path.join(t.dataDir, w.file), { force: true });
    throw err;
  }
  return { written, rrsetsIn };
}
