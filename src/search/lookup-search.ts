// Standard search (spec 4.1, compat.md "Result objects"): lookups and their
// summaries over a plan's sources.
//
// Order: every source yields rows sorted by key (its index key, then the
// RRset's own), the paginator merges them, and with aggr (the default) the
// rows several sources hold under one key are one result whose sighting is
// the sum of theirs (model/sighting.ts). Offsets are therefore stable while
// the data is unchanged.
//
// Time fences judge the result as the client receives it (compat.md
// "Values"): with aggr the summed sighting, so an RRset first seen nine
// years ago is not "first seen after yesterday" because one shard saw it
// yesterday; without aggr each row on its own. A fence never shortens an
// object's times. A summary counts the results it would have written
// and sums their sightings into one object; `max_count` ends it early as
// complete (`succeeded`), `limit` as `limited`.

import { inFence, type TimeFence } from '../model/filters.js';
import { addSighting, firstSeen, lastSeen, noSighting, type Sighting } from '../model/sighting.js';
import type { LookupQuery } from '../query/lookup-query.js';
import { lookupLine, summaryLine, type LookupResult } from '../render/result-lines.js';
import type { Effective } from '../query/params.js';
import type { LookupPlan } from './backend.js';
import { paginate, type Combiner, type Output, type PageOutcome } from './paginator.js';
import type { ResultSink } from './sink.js';
import type { LookupSource } from './sources.js';

/** Whether a result, with its (summed) sighting, passes the answer's time fence: the one rule sources and merge judge by. */
export function keptByFence(s: Readonly<Sighting>, fence: TimeFence): boolean {
  return inFence(firstSeen(s), lastSeen(s), fence);
}

/**
 * Folds the rows of one key into one result: the first row's fields, the sum
 * of every row's sighting; no result when the sum is outside the fence.
 */
class SummedRows implements Combiner<LookupSource, LookupResult> {
  private first: LookupResult | undefined;
  private summed: LookupResult | undefined;

  constructor(private readonly fence: TimeFence) {}

  add(source: LookupSource): void {
    const row = source.row();
    if (this.first === undefined) {
      this.first = row;
      return;
    }
    // A second source holds the key: from here on the sum is a result of its own.
    if (this.summed === undefined) {
      const f = this.first;
      this.summed = { rrname: f.rrname, rrtype: f.rrtype, bailiwick: f.bailiwick, rdata: f.rdata, sighting: { ...f.sighting } };
    }
    addSighting(this.summed.sighting, row.sighting);
  }

  take(): LookupResult | undefined {
    const r = this.summed ?? this.first;
    this.first = undefined;
    this.summed = undefined;
    return r !== undefined && keptByFence(r.sighting, this.fence) ? r : undefined;
  }
}

/**
 * Result lines to the sink. Plain: a lone source may write its results'
 * lines itself (LookupSource.bulk), judging the fence as SummedRows does.
 */
function resultLines(sink: ResultSink, humantime: boolean): Output<LookupResult> {
  return { write: (r) => sink.text(`${lookupLine(r, humantime)}\n`), plain: true };
}

/** One summary object: the results are counted and their sightings summed. */
function summary(q: LookupQuery): Output<LookupResult> {
  const total: Sighting = noSighting();
  return {
    write: (r) => void addSighting(total, r.sighting),
    complete: () => q.maxCount !== undefined && total.count >= q.maxCount,
    closing: (results) => `${summaryLine(total, results, q.humantime)}\n`,
  };
}

/** Runs a planned lookup or summary to its terminator, or to a `failed` one after `deadlineMs`. */
export function runLookup(plan: LookupPlan, q: LookupQuery, eff: Effective, deadlineMs: number,
  sink: ResultSink): PageOutcome | Promise<PageOutcome> {
  return paginate(plan, new SummedRows(eff.fence), q.summarize ? summary(q) : resultLines(sink, q.humantime),
    { offset: eff.offset, limit: eff.limit, deadlineMs }, sink);
}
