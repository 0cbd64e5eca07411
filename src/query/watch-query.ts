// A standing watch, validated (README "Standing watches"): the flexible
// search it holds open (method, target, pattern, rrtype, exclude, limit) and
// the time from which a tuple's first sighting counts. Pure: no I/O, no
// clock (callers pass `now`).
//
// `time_first_after` is the one time parameter a watch takes, and for a
// watch it is inclusive: a tuple first seen at that second or later counts.
// Times are whole seconds, so a client that resumes from the last time_first
// it received must get that second again, not lose the rest of it (the
// tuples it already had come twice: duplicates at the boundary). Without it
// the watch counts from the second it opens. The other fences and `offset`
// mean nothing for a stream of news and are refused (400), as flexible
// search refuses aggr, humantime and max_count.

import { ApiError } from '../errors/catalogue.js';
import { parseFlexQuery, type FlexQuery } from './flex-query.js';

export interface WatchQuery extends FlexQuery {
  /** Tuples first seen at this epoch second or later count (inclusive). */
  since: number;
  /** `since` came from time_first_after: the published data is searched from it first (the catch-up). */
  catchUp: boolean;
}

const NOT_FOR_WATCH = ['offset', 'time_first_before', 'time_last_before', 'time_last_after'];

/** `segments` are the decoded path segments after `watch`, starting with the method. */
export function parseWatchQuery(segments: readonly string[], q: ReadonlyMap<string, string>, now: number): WatchQuery {
  if (segments.length === 0 || segments[0] === '') throw new ApiError('MISSING_SEGMENT');
  if (segments[0] !== 'regex' && segments[0] !== 'glob') throw new ApiError('BAD_SEARCH_METHOD');
  for (const p of NOT_FOR_WATCH) if (q.has(p)) throw new ApiError('UNPARSABLE_REQUEST');
  const flex = parseFlexQuery(segments, q, now);
  const after = flex.fence.firstAfter;
  // The fence is the key's alone (applyKey adds it); the watch's own time is `since`.
  return { ...flex, fence: {}, since: after ?? now, catchUp: after !== undefined };
}
