// Parallel NDJSON ingest: one big file cut into ranges of whole lines, each
// range parsed, aggregated and written to shards by its own thread
// (ndjson-range.ts, on workers/ingest.ts). NDJSON is the one format that
// allows this: every line stands alone, where a zone file carries $ORIGIN
// and parentheses from line to line and a pcap carries TCP streams from
// packet to packet.
//
// An RRset seen in two ranges lands in two shards; queries merge equal
// RRsets across shards (src/lib/merge.ts) and compaction folds them, as
// for a run that spills several shards. The caller publishes every range's
// shards in its one manifest swap, or deletes them all.

import { LIMITS } from '../config/limits.js';
import { IngestError } from '../errors/catalogue.js';
import { splitLines } from '../lib/line-reader.js';
import type { WrittenShard } from '../shard/shard-spiller.js';
import { outcomes, runOnThreads } from '../lib/threads.js';
import type { RunSettings } from './ndjson-range.js';

export interface ParallelSummary {
  records: number;
  observations: number;
  rejected: number;
  written: WrittenShard[];
}

export interface ParallelOptions extends RunSettings {
  threads: number;
  onProgress?: (bytes: number) => void;
  onReject?: (err: IngestError) => void;
  /** Deletes written shards when the run fails (the caller's ShardSpiller does it). */
  discard: (shards: readonly WrittenShard[]) => Promise<void>;
}

export async function ingestNdjsonParallel(file: string, opts: ParallelOptions): Promise<ParallelSummary> {
  const ranges = await splitLines(file, opts.threads);
  const rejected = new SharedArrayBuffer(4);
  const progress = new SharedArrayBuffer(8 * ranges.length);
  const read = new Float64Array(progress);
  const timer = setInterval(() => opts.onProgress?.(read.reduce((a, b) => a + b, 0)), LIMITS.ingestProgressIntervalMs);
  try {
    const memoryRrsets = Math.max(1, Math.floor(opts.memoryRrsets / ranges.length));
    const settled = await runOnThreads('ingest', ranges.map((range, index) => ({
      file, range, dataDir: opts.dataDir, label: opts.label, now: opts.now, memoryRrsets, writer: opts.writer, maxErrors: opts.maxErrors,
      rejected, progress, index,
    })));
    const { done: results, failed: crashed } = outcomes(settled);
    const written = results.flatMap((r) => r.written);
    const failed = results.find((r) => r.failure !== undefined)?.failure;
    if (crashed !== undefined || failed !== undefined) {
      await opts.discard(written);
      if (failed !== undefined) throw new IngestError(failed.file, failed.where, failed.reason);
      throw crashed!.reason;
    }
    for (const r of results) for (const b of r.rejects) opts.onReject?.(new IngestError(b.file, b.where, b.reason));
    opts.onProgress?.(ranges.reduce((a, r) => a + r.end - r.start, 0));
    return {
      records: results.reduce((a, r) => a + r.records, 0),
      observations: results.reduce((a, r) => a + r.observations, 0),
      rejected: Atomics.load(new Int32Array(rejected), 0),
      written,
    };
  } finally {
    clearInterval(timer);
  }
}
