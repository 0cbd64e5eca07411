// Piscina entry point of the scan workers: one flexible-search scan task
// (src/search/local/flex-scan.ts) per call, with the shards and compiled
// patterns this thread has kept from earlier tasks.

import { FlexScan, WorkerCache } from '../src/search/local/flex-scan.js';
import type { FlexTask } from '../src/search/local/scan-protocol.js';

const cache = new WorkerCache();

export default function scan(task: FlexTask): void {
  new FlexScan(task, cache).run();
}
