// Piscina entry point: one range of lines of an NDJSON file, parsed,
// aggregated and written to shard files that the calling thread publishes
// (src/ingest/ndjson-range.ts, started by src/ingest/parallel.ts).

import { ingestRange, type RangeResult, type RangeTask } from '../src/ingest/ndjson-range.js';
import type { WorkerFunction } from '../src/lib/workers.js';

declare module '../src/lib/workers.js' {
  interface WorkerCalls {
    ingest: WorkerCall<RangeTask, RangeResult>;
  }
}

export default ingestRange satisfies WorkerFunction<'ingest'>;
