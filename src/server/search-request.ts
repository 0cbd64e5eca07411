// A search request, parsed: flexible and standard searches go through one
// path in the front end (app.ts), and this is what differs between them.

import { ApiError } from '../errors/catalogue.js';
import type { Endpoint } from '../auth/access-gate.js';
import { parseFlexQuery } from '../query/flex-query.js';
import { parseLookupQuery } from '../query/lookup-query.js';
import type { CommonParams, Effective } from '../query/params.js';
import { parseQueryString } from '../query/percent.js';
import type { SearchBackend } from '../search/backend.js';
import { runFlexSearch } from '../search/flex-search.js';
import { runLookup } from '../search/lookup-search.js';
import { logMember } from './log.js';
import type { PageOutcome } from '../search/paginator.js';
import type { ResultSink } from '../search/sink.js';

/** A planned search: streamed once the request is charged, or cancelled when the charge refuses it. */
export interface PlannedSearch {
  /** The outcome at once when the answer ended within the call (paginate), else a Promise of it. */
  run(sink: ResultSink): PageOutcome | Promise<PageOutcome>;
  cancel(): void;
}

export interface SearchRequest {
  readonly endpoint: Exclude<Endpoint, 'rate_limit'>;
  readonly params: CommonParams;
  /** Plans over the data as it is now; throws ApiError OVERLOADED when the backend cannot take it. */
  plan(eff: Effective): PlannedSearch;
  /** Keep-alives no more often than this, whatever --keepalive-ms says (a watch's: LIMITS.watchKeepAliveMsMin). */
  readonly keepAliveMsMin?: number;
  /**
   * What the request log may record of the query (never for keys with query privacy), as the members of
   * its line (server/log.ts logMember); built only when logged.
   */
  logMembers(): string;
}

/**
 * id, swclient and version as request log members: parseCommon let through
 * only letters, digits and `:._-` (spec 4.3), which JSON writes as they are.
 */
export function clientMembers(p: CommonParams): string {
  let m = '';
  if (p.id !== undefined) m += `,"id":"${p.id}"`;
  if (p.swclient !== undefined) m += `,"swclient":"${p.swclient}"`;
  if (p.version !== undefined) m += `,"version":"${p.version}"`;
  return m;
}

/** Validates a search's path segments and query string (400s); `now` anchors relative times. */
export function parseSearch(kind: 'flex' | 'lookup' | 'summarize', segments: readonly string[], query: string, path: string,
  now: number, backend: SearchBackend, timeoutMs: number): SearchRequest {
  const params = parseQueryString(query);
  if (!params) throw new ApiError('UNPARSABLE_REQUEST');
  if (kind === 'flex') {
    const q = parseFlexQuery(segments, params, now);
    return {
      endpoint: 'flex', params: q,
      plan: (eff) => {
        const plan = backend.planFlex(q, eff);
        return { run: (sink) => runFlexSearch(plan, eff, timeoutMs, sink), cancel: () => plan.cancel() };
      },
      logMembers: () => `,"method":"${q.method}","target":"${q.target}"` +
        `${logMember('pattern', q.pattern)}${logMember('exclude', q.exclude)}${clientMembers(q)}`,
    };
  }
  const q = parseLookupQuery(segments, params, now);
  return {
    endpoint: q.summarize ? 'summarize' : 'lookup', params: q,
    plan: (eff) => {
      const plan = backend.planLookup(q, eff);
      return { run: (sink) => runLookup(plan, q, eff, timeoutMs, sink), cancel: () => plan.cancel() };
    },
    logMembers: () => logMember('path', path) + clientMembers(q),
  };
}
