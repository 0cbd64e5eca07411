// Piscina entry point: maps and fully verifies shard files (checksums over
// every byte, ~170 ms per GB) off the thread that answers requests, and
// hands back the mappings, which are shared, not copied, or why each file
// could not be opened (src/search/local/shard-set.ts).

import { openShardFiles, type OpenOutcome } from '../src/shard/shard-reader.js';

export default function openShards(files: readonly string[]): OpenOutcome[] {
  return openShardFiles(files);
}
