// Piscina entry point: one part of the demo data set, generated, aggregated
// and written to shard files that the calling thread publishes
// (src/demo/demo-part.ts, started by src/demo/parallel.ts).

import { generateDemoPart, type DemoPartResult, type DemoPartTask } from '../src/demo/demo-part.js';
import type { WorkerFunction } from '../src/lib/workers.js';

declare module '../src/lib/workers.js' {
  interface WorkerCalls {
    demo: WorkerCall<DemoPartTask, DemoPartResult>;
  }
}

export default generateDemoPart satisfies WorkerFunction<'demo'>;
