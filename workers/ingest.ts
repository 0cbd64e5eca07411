// Piscina entry point: one range of lines of an NDJSON file, parsed,
// aggregated and written to shard files that the calling thread publishes
// (src/ingest/parallel.ts). Shards are written here, not sent back: an
// RrsetTable is hundreds of MB that would be copied across threads.

import { LIMITS } from '../src/config/limits.js';
import { IngestError } from '../src/errors/catalogue.js';
import { ndjsonObservations } from '../src/ingest/ndjson.js';
import type { IngestContext } from '../src/ingest/context.js';
import { badLine, type BadLine, type RangeResult, type RangeTask } from '../src/ingest/parallel.js';
import { ShardSpiller } from '../src/shard/shard-spiller.js';

/** Observations between two looks at the shared reject count. */
const CHECK_EVERY = 4096;

export default async function ingestRange(t: RangeTask): Promise<RangeResult> {
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
