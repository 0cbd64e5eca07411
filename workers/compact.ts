// Piscina entry point: one range of owner names of a compaction, merged from
// every input shard and written to new shard files that the calling thread
// publishes (src/shard/compact-range.ts, started by src/shard/compactor.ts).

import { compactRange, type CompactRange, type CompactRangeResult } from '../src/shard/compact-range.js';
import type { WorkerFunction } from '../src/lib/workers.js';

declare module '../src/lib/workers.js' {
  interface WorkerCalls {
    compact: WorkerCall<CompactRange, CompactRangeResult>;
  }
}

export default compactRange satisfies WorkerFunction<'compact'>;
