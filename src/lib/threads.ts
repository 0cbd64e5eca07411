// Threads for the data-building commands (parallel NDJSON ingest,
// compaction): a pool made for one run, each task on its own thread, and
// every task's outcome, so the caller can delete what succeeded tasks wrote
// when another failed.

import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';
import { LIMITS } from '../config/limits.js';
import { DIST_ROOT } from '../config/paths.js';

/** Threads to use: `requested` (--workers) or one per core, within LIMITS. */
export function threadsFor(requested?: number): number {
  return Math.max(1, Math.min(requested ?? availableParallelism(), LIMITS.ingestThreadsMax));
}

/** The compiled entry point of worker thread `worker` (workers/`worker`.ts). */
export function workerFile(worker: string): string {
  return path.join(DIST_ROOT, 'workers', `${worker}.js`);
}

/**
 * Runs each task on its own thread of dist/workers/`worker`.js; settles when
 * all have. Aborting `signal` stops the threads still running (Piscina
 * terminates them) and their tasks settle rejected with an AbortError.
 */
export async function runOnThreads<T, R>(worker: string, tasks: readonly T[], signal?: AbortSignal): Promise<PromiseSettledResult<R>[]> {
  const pool = new Piscina({
    filename: workerFile(worker),
    minThreads: 0, maxThreads: tasks.length, maxQueue: tasks.length, concurrentTasksPerWorker: 1,
  });
  try {
    return await Promise.allSettled(tasks.map((t) => pool.run(t, signal ? { signal } : {}) as Promise<R>));
  } finally {
    await pool.destroy();
  }
}
