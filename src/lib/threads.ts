// Worker thread pools, made by entry point name from the table in
// lib/workers.ts, so every call is typed: the search's scan pool and the
// shard checks keep a pool for the server's life (workerPool); the
// data-building commands (parallel NDJSON ingest, compaction) make one for
// a run, each task on its own thread, and get every task's outcome, so the
// caller can delete what succeeded tasks wrote when another failed
// (runOnThreads).

import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Piscina } from 'piscina';
import { LIMITS } from '../config/limits.js';
import { DIST_ROOT } from '../config/paths.js';
import type { WorkerName, WorkerResult, WorkerTask } from './workers.js';

/** Threads to use: `requested` (--workers) or one per core, within LIMITS. */
export function threadsFor(requested?: number): number {
  return Math.max(1, Math.min(requested ?? availableParallelism(), LIMITS.ingestThreadsMax));
}

/** The compiled entry point of worker thread `worker` (workers/`worker`.ts). */
export function workerFile(worker: WorkerName): string {
  return path.join(DIST_ROOT, 'workers', `${worker}.js`);
}

/** A pool of entry point `N`'s threads: run() takes its task and resolves to its result. */
export type WorkerPool<N extends WorkerName> = Piscina<WorkerTask<N>, WorkerResult<N>>;

/** Piscina's options but the file, which the name gives. Set maxQueue: Piscina's default is unbounded. */
export type WorkerPoolOptions = Omit<NonNullable<ConstructorParameters<typeof Piscina>[0]>, 'filename'>;

/** A pool of `worker`'s threads. */
export function workerPool<N extends WorkerName>(worker: N, options: WorkerPoolOptions): WorkerPool<N> {
  return new Piscina<WorkerTask<N>, WorkerResult<N>>({ ...options, filename: workerFile(worker) });
}

/**
 * Runs each task on its own thread of `worker`; settles when all have.
 * Aborting `signal` stops the threads still running (Piscina terminates
 * them) and their tasks settle rejected with an AbortError.
 */
export async function runOnThreads<N extends WorkerName>(worker: N, tasks: readonly WorkerTask<N>[],
  signal?: AbortSignal): Promise<PromiseSettledResult<WorkerResult<N>>[]> {
  const pool = workerPool(worker, { minThreads: 0, maxThreads: tasks.length, maxQueue: tasks.length, concurrentTasksPerWorker: 1 });
  try {
    return await Promise.allSettled(tasks.map((t) => pool.run(t, signal ? { signal } : {})));
  } finally {
    await pool.destroy();
  }
}

/** runOnThreads' outcomes split: the results of the tasks that succeeded, and the first failure (undefined when none failed). */
export function outcomes<R>(settled: readonly PromiseSettledResult<R>[]): { done: R[]; failed: PromiseRejectedResult | undefined } {
  return {
    done: settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : [])),
    failed: settled.find((s): s is PromiseRejectedResult => s.status === 'rejected'),
  };
}
