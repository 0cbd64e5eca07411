// The demo data set on one thread per core: each thread makes one part
// (demo-part.ts, which says how the data set is cut) and writes its shards;
// this thread publishes them all in one manifest swap, or deletes them all.

import { LIMITS } from '../config/limits.js';
import { ingestObservations, ingestOnThreads, type IngestSummary } from '../ingest/run.js';
import { outcomes, runOnThreads, threadsFor } from '../lib/threads.js';
import type { DemoPartResult } from './demo-part.js';
import { demoObservations } from './generate.js';

/**
 * `records` demo RRsets into new shards of `dataDir`, published at once;
 * on `threads` threads (default one per core, at most
 * LIMITS.demoThreadsMax) from LIMITS.demoParallelRrsetsMin RRsets up, else
 * on this one. `onProgress` gets the RRsets generated so far.
 */
export async function ingestDemo(dataDir: string, records: number, label: string, onProgress?: (rrsets: number) => void,
  threads?: number): Promise<IngestSummary> {
  const parts = records < LIMITS.demoParallelRrsetsMin ? 1 : Math.min(threadsFor(threads), LIMITS.demoThreadsMax);
  if (parts === 1) return ingestObservations(demoObservations({ records }), dataDir, label, onProgress);
  return ingestOnThreads(dataDir, label, async (run) => {
    const progress = new SharedArrayBuffer(8 * parts);
    const generated = new Float64Array(progress);
    // Every part generates the whole sequence: the slowest says how far it is.
    const timer = setInterval(() => onProgress?.(Math.min(...generated)), LIMITS.ingestProgressIntervalMs);
    try {
      const memoryRrsets = Math.max(1, Math.floor(run.memoryRrsets / parts));
      const settled = await runOnThreads('demo', Array.from({ length: parts }, (_, part) => ({
        records, part, parts, dataDir, label, now: run.now, memoryRrsets, writer: run.writer, progress,
      })));
      const { done, failed } = outcomes(settled);
      if (failed !== undefined) {
        await run.discard(done.flatMap((r) => r.written));
        throw failed.reason;
      }
      const sum = (f: (r: DemoPartResult) => number) => done.reduce((n, r) => n + f(r), 0);
      return { written: done.flatMap((r) => r.written), records: sum((r) => r.records), observations: sum((r) => r.observations) };
    } finally {
      clearInterval(timer);
    }
  });
}
