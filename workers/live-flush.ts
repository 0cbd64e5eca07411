// Piscina entry point: one flush of the live dnstap receiver, built and
// written on this thread (src/ingest/live/live-flush.ts, started by
// src/ingest/live/publisher.ts).

import { liveFlush, type LiveFlushResult, type LiveFlushTask } from '../src/ingest/live/live-flush.js';
import type { WorkerFunction } from '../src/lib/workers.js';

declare module '../src/lib/workers.js' {
  interface WorkerCalls {
    'live-flush': WorkerCall<LiveFlushTask, LiveFlushResult>;
  }
}

export default liveFlush satisfies WorkerFunction<'live-flush'>;
