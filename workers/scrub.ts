// Piscina entry point of the shard scrub: one shard file re-read and checked
// at a bounded rate per call (src/shard/scrub.ts), on a thread that answers
// no request (src/search/local/shard-scrub.ts runs the passes, and
// shard-verifier.ts the checks before a shard is served).

import { scrubShardFile, type ScrubResult, type ScrubTask } from '../src/shard/scrub.js';
import type { WorkerFunction } from '../src/lib/workers.js';

declare module '../src/lib/workers.js' {
  interface WorkerCalls {
    scrub: WorkerCall<ScrubTask, ScrubResult>;
  }
}

export default scrubShardFile satisfies WorkerFunction<'scrub'>;
