// One range of lines of a big NDJSON file, parsed, aggregated and written
// to shard files that the calling thread publishes (parallel.ts cuts the
// file and runs each range on a thread of workers/ingest.ts, which imports
// this module and nothing that starts threads). Shards are written here,
// not sent back: an RrsetTable is hundreds of MB that would be copied
// across threads.

import { LIMITS } from '../config/limits.js';
import { IngestError } from '../errors/catalogue.js';
import type { ByteRange } from '../lib/line-reader.js';
import { ShardSpiller, type WrittenShard } from '../shard/shard-spiller.js';
import type { IngestContext } from './context.js';
import { ndjsonObservations } from './ndjson.js';

/** What every range of a run shares, as the caller gives it. */
export interface RunSettings {
  dataDir: string;
  label: string;
  now: number;
  /** RRsets held in memory: the run's budget in ParallelOptions, one range's share in a RangeTask. */
  memoryRrsets: number;
  /** The run's WriterLock id (file-lock.ts), held by the calling thread. */
  writer: string;
  /** Bad lines the whole file may skip; the count is shared by every range. */
  maxErrors: number;
}

/** One range's work, run on its own thread (workers/ingest.ts). */
export interface RangeTask extends RunSettings {
  file: string;
  range: ByteRange;
  /** Int32Array[1]: bad lines so far, over all ranges. */
  rejected: SharedArrayBuffer;
  /** Float64Array[ranges]: bytes each range has read, for the progress bar. */
  progress: SharedArrayBuffer;
  index: number;
}

/** An IngestError's fields: the error itself does not cross the thread boundary as one. */
export interface BadLine {
  file: string;
  where: string;
  reason: string;
}

export function badLine(err: IngestError): BadLine {
  return { file: err.file, where: err.where, reason: err.reason };
}

export interface RangeResult {
  records: number;
  observations: number;
  written: WrittenShard[];
  /** The first skipped lines (LIMITS.ingestRejectsReportedMax). */
  rejects: BadLine[];
  /** The bad line that passed --max-errors. */
  failure?: BadLine;
}

/** Observations between two looks at the shared reject count. */
const CHECK_EVERY = 4096;

/** Parses, aggregates and writes one range (see the top of this file). */
export async function ingestRange(t: RangeTask): Promise<RangeResult> {
  const spiller = new ShardSpiller(t.dataDir, t.label, t.now, t.memoryRrsets, t.writer);
  const rejected = new Int32Array(t.rejected);
  const progress = new Float64Array(t.progress);
  const rejects: BadLine[] = [];
  const ctx: IngestContext = {
    file: t.file,
    reject(err: Error) {
      if (Atomics.add(rejected, 0, 1) + 1 > t.maxErrors) throw err;
      if (rejects.length < LIMITS.ingestRejectsReportedMax && err instanceof IngestError) rejects.push(badLine(err));
    },
    progress(bytes: number) {
      progress[t.index] = bytes;
    },
  };
  try {
    let n = 0;
    for await (const o of ndjsonObservations(t.file, ctx, t.range)) {
      await spiller.add(o);
      // Another range passed --max-errors: the run fails, so stop early.
      if (++n % CHECK_EVERY === 0 && Atomics.load(rejected, 0) > t.maxErrors) break;
    }
    const written = await spiller.close();
    return { records: spiller.records, observations: spiller.observations, written, rejects };
  } catch (err) {
    await spiller.abort();
    if (!(err instanceof IngestError)) throw err;
    return {
      records: spiller.records, observations: spiller.observations, written: [], rejects,
      failure: badLine(err),
    };
  }
}
