// Flexible search (spec 4.2): a plan's one source of unique values, paged
// by offset and limit on UNIQUE values (spec 4.2 rule 6), each value
// written as its lines (one per rrtype). A value that several shards hold
// is one result whose rrtypes are the union of theirs: the tier unites them
// before its source hands them on (local/flex-scan.ts, ClickHouse's GROUP BY).

import type { Effective } from '../query/params.js';
import type { FlexPlan } from './backend.js';
import { paginateBulk, type PageOutcome } from './paginator.js';
import type { ResultSink } from './sink.js';

/** Runs a planned flexible search to its terminator, or to a `failed` one after `deadlineMs`. */
export function runFlexSearch(plan: FlexPlan, eff: Effective, deadlineMs: number, sink: ResultSink): PageOutcome | Promise<PageOutcome> {
  // A bad pattern fails fast, with RE2's own words, before anything runs.
  if (plan.error !== undefined) {
    plan.cancel();
    sink.end('failed', plan.error);
    return { results: 0, terminator: 'failed', message: plan.error };
  }
  return paginateBulk(plan, { offset: eff.offset, limit: eff.limit, deadlineMs }, sink);
}
