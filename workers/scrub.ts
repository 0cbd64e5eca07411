// Piscina entry point of the shard scrub: one shard file re-read and checked
// at a bounded rate per call (src/shard/scrub.ts), on a thread that answers
// no request (src/search/local/shard-scrub.ts runs the passes).

import { scrubShardFile, type ScrubResult, type ScrubTask } from '../src/shard/scrub.js';

export default function scrub(task: ScrubTask): ScrubResult {
  return scrubShardFile(task);
}
