// Piscina entry point of the watch matcher (src/search/local/watch-match-task.ts):
// one thread for the life of a server that has opened a watch, matching each
// published snapshot's new shards against every open watch's pattern, with
// the patterns (their compiled RE2.Sets) and the attached shards it keeps
// between tasks.

import { WatchMatchThread, type WatchMatchResult, type WatchMatchTask } from '../src/search/local/watch-match-task.js';

const thread = new WatchMatchThread();

export default function watchMatch(task: WatchMatchTask): WatchMatchResult {
  return thread.run(task);
}
