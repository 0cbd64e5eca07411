// Piscina entry point of the scan workers: one flexible-search scan task
// (src/search/local/flex-scan.ts) per call, with the shards and compiled
// patterns this thread has kept from earlier tasks. It answers nothing:
// batches and the end go back through the task's port (scan-protocol.ts).

import { FlexScan, WorkerCache } from '../src/search/local/flex-scan.js';
import type { FlexTask } from '../src/search/local/scan-protocol.js';
import type { WorkerFunction } from '../src/lib/workers.js';

declare module '../src/lib/workers.js' {
  interface WorkerCalls {
    scan: WorkerCall<FlexTask, void>;
  }
}

const cache = new WorkerCache();

function scan(task: FlexTask): void {
  new FlexScan(task, cache).run();
}

export default scan satisfies WorkerFunction<'scan'>;
