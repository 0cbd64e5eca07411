// Piscina entry point of the watch matcher (src/search/local/watch-match-task.ts):
// one thread for the life of a server that has opened a watch, matching each
// published snapshot's new shards against every open watch's pattern, with
// the patterns (their compiled RE2.Sets) and the attached shards it keeps
// between tasks.

import type { WorkerFunction } from '../src/lib/workers.js';
import { WatchMatchThread, type WatchMatchResult, type WatchMatchTask } from '../src/search/local/watch-match-task.js';

declare module '../src/lib/workers.js' {
  interface WorkerCalls {
    'watch-match': WorkerCall<WatchMatchTask, WatchMatchResult>;
  }
}

const thread = new WatchMatchThread();

export default function watchMatch(task: WatchMatchTask): WatchMatchResult {
  return thread.run(task);
}
watchMatch satisfies WorkerFunction<'watch-match'>;
