// A standing watch as a request (README "Standing watches"): it takes the
// path every search takes in the front end (app.ts: authenticate, plan and
// reserve, charge as one flexible search, stream), so a key's quota,
// --max-concurrent slot (held for as long as the watch is open), address
// allow list and time fence apply to it exactly as they do to a search.
// What differs is what runs once it is admitted: the data tier's watch
// (SearchBackend.planWatch) instead of a search.

import { LIMITS } from '../config/limits.js';
import { ApiError } from '../errors/catalogue.js';
import { parseQueryString } from '../query/percent.js';
import { parseWatchQuery } from '../query/watch-query.js';
import type { SearchBackend } from '../search/backend.js';
import { runWatch } from '../search/watch-stream.js';
import { logMember } from './log.js';
import { clientMembers, type SearchRequest } from './search-request.js';

/** Validates a watch's path segments (those after `watch`) and query string (400s); `now` is when it starts. */
export function parseWatchRequest(segments: readonly string[], query: string, now: number, backend: SearchBackend): SearchRequest {
  // A tier that cannot hold watches does not have the endpoint.
  if (backend.planWatch === undefined) throw new ApiError('NOT_FOUND');
  const params = parseQueryString(query);
  if (!params) throw new ApiError('UNPARSABLE_REQUEST');
  const q = parseWatchQuery(segments, params, now);
  return {
    // Charged as one flexible search: the quota counts it once, when it is admitted, however long it stays open.
    endpoint: 'flex', params: q, keepAliveMsMin: LIMITS.watchKeepAliveMsMin,
    plan: (eff) => {
      const plan = backend.planWatch!(q, eff);
      return { run: (sink) => runWatch(plan, eff.limit, sink), cancel: () => plan.cancel() };
    },
    logMembers: () => `,"watch":true,"method":"${q.method}","target":"${q.target}"` +
      `${logMember('pattern', q.pattern)}${logMember('exclude', q.exclude)}${logMember('since', q.since)}${clientMembers(q)}`,
  };
}
