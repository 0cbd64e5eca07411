// The worker threads' entry points, one table: name -> the task a call
// takes -> the result it gives back. Each entry is a file workers/<name>.ts
// whose default export runs one task; every pool is made by name from
// this table (lib/threads.ts: workerPool, runOnThreads), so a call needs
// no cast, and a task of the wrong shape, or a name with no entry, does
// not compile.
//
//   name        entry point            task (declared in)                         result
//   scan        workers/scan.ts        FlexTask (search/local/scan-protocol.ts)   none: batches go by the task's port
//   ingest      workers/ingest.ts      RangeTask (ingest/ndjson-range.ts)         RangeResult
//   compact     workers/compact.ts     CompactRange (shard/compact-range.ts)      CompactRangeResult
//   live-flush  workers/live-flush.ts  LiveFlushTask (ingest/live/live-flush.ts)  LiveFlushResult
//   scrub       workers/scrub.ts       ScrubTask (shard/scrub.ts)                 ScrubResult
//   watch-match workers/watch-match.ts WatchMatchTask (search/local/watch-match-task.ts)  WatchMatchResult
//   demo        workers/demo.ts        DemoPartTask (demo/demo-part.ts)           DemoPartResult
//
// Where the types come from: lib sits below every module that declares a
// task (search/local, ingest, shard) and may import none of them, so the
// table is declared here empty and each entry point adds its own row,
// beside the function it exports and checked against it:
//
//   declare module '../src/lib/workers.js' {
//     interface WorkerCalls { compact: WorkerCall<CompactRange, CompactRangeResult> }
//   }
//   export default compactRange satisfies WorkerFunction<'compact'>;
//
// TypeScript merges those declarations into this one interface (inside the
// block, WorkerCall is this module's own); a second row for a name with
// other types does not compile. WORKER_NAMES lists the
// rows (checked both ways below), and a unit test that each has its file.
//
// An entry point imports what it runs; what it runs never imports the
// module that starts its pool (a worker thread starts no workers:
// .dependency-cruiser.cjs `workers-never-start-workers`), so no runtime
// cycle hides behind a file name.

/** One row: what a call of the entry point takes and gives back. */
export interface WorkerCall<Task, Result> {
  readonly task: Task;
  readonly result: Result;
}

/** The table: one row per entry point, added by the entry point itself (see the top of this file). */
export interface WorkerCalls {}

export type WorkerName = keyof WorkerCalls;
export type WorkerTask<N extends WorkerName> = WorkerCalls[N] extends WorkerCall<infer T, unknown> ? T : never;
export type WorkerResult<N extends WorkerName> = WorkerCalls[N] extends WorkerCall<unknown, infer R> ? R : never;

/** The default export of workers/<name>.ts: one task in, its result out (or a Promise of it). */
export type WorkerFunction<N extends WorkerName> = (task: WorkerTask<N>) => WorkerResult<N> | Promise<WorkerResult<N>>;

/** Every row's name, for what needs them at run time (the unit test that each has its file). */
export const WORKER_NAMES = ['scan', 'ingest', 'compact', 'live-flush', 'scrub', 'watch-match', 'demo'] as const satisfies
  readonly WorkerName[];

/** Compiles only while every row of WorkerCalls is in WORKER_NAMES (the `satisfies` above checks the other way). */
export const EVERY_ROW_NAMED: [Exclude<WorkerName, (typeof WORKER_NAMES)[number]>] extends [never] ? true : never = true;
