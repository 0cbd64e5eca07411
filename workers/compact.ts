// Piscina entry point: one range of owner names of a compaction, merged from
// every input shard and written to new shard files that the calling thread
// publishes (src/shard/compactor.ts).

import { compactRange, type CompactRange, type CompactRangeResult } from '../src/shard/compactor.js';

export default function compactPart(t: CompactRange): Promise<CompactRangeResult> {
  return compactRange(t);
}
