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

import { LIMITS } from '../config/limits.js';
import { inFence, type TimeFence } from '../model/filters.js';
import { addSighting, firstSeen, lastSeen, noSighting, type Sighting } from '../model/sighting.js';
import type { LookupQuery } from '../query/lookup-query.js';
import { LookupLineBytes } from '../render/lookup-line-bytes.js';
import { summaryLine } from '../render/result-lines.js';
import type { Effective } from '../query/params.js';
import type { LookupPlan } from './backend.js';
import { paginate, type Combiner, type Output, type PageOutcome } from './paginator.js';
import { writeLines, type ResultSink } from './sink.js';
import type { LookupSource } from './sources.js';

/** Whether a result, with its (summed) sighting, passes the answer's time fence: the one rule sources and merge judge by. */
export function keptByFence(s: Readonly<Sighting>, fence: TimeFence): boolean {
  return inFence(firstSeen(s), lastSeen(s), fence);
}

/**
 * One key's rows folded into one result: written from the first row's
 * source (its fields) with the sum of every row's sighting. Valid until the
 * sources advance (paginator.ts: a result is written before they do).
 */
interface SummedResult {
  source: LookupSource;
  sighting: Sighting;
}

/** Folds the rows of one key into one result; no result when the sum is outside the fence. */
class SummedRows implements Combiner<LookupSource, SummedResult> {
  /** Reused: a result is written (or summed) before the next key is folded. */
  private readonly result: SummedResult;
  private readonly other: Sighting = noSighting();
  private rows = 0;

  constructor(private readonly fence: TimeFence) {
    this.result = { source: undefined as unknown as LookupSource, sighting: noSighting() };
  }

  add(source: LookupSource): void {
    if (this.rows++ === 0) {
      this.result.source = source;
      source.sighting(this.result.sighting);
      return;
    }
    addSighting(this.result.sighting, source.sighting(this.other));
  }

  take(): SummedResult | undefined {
    const rows = this.rows;
    this.rows = 0;
    return rows > 0 && keptByFence(this.result.sighting, this.fence) ? this.result : undefined;
  }
}

/** An answer's line buffer starts this small (an exact lookup's line fits) and doubles up to a write chunk. */
const LINES_BYTES_FIRST = 1024;

/**
 * Result lines to the sink, as bytes gathered up to a write chunk and handed
 * over whenever the paginator pauses (Output.flush). Plain: a lone source
 * may write its results' lines itself (LookupSource.bulk), judging the
 * fence as SummedRows does.
 */
function resultLines(sink: ResultSink, humantime: boolean): Output<SummedResult> {
  // Made at the first result that is not a lone source's (most answers have none).
  let w: LookupLineBytes | undefined;
  return {
    write: (r) => {
      w ??= new LookupLineBytes(LINES_BYTES_FIRST);
      r.source.line(w, r.sighting, humantime);
      if (w.length >= LIMITS.writeChunkBytes) sink.bytes(w.take());
    },
    flush: () => {
      if (w === undefined || w.length === 0) return;
      writeLines(sink, w.takeLines(LIMITS.corkPieceBytes));
    },
    plain: true,
  };
}

/** One summary object: the results are counted and their sightings summed. */
function summary(q: LookupQuery): Output<SummedResult> {
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
