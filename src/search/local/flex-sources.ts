// Flexible search over the local shards: ONE sorted source, fed by scan
// tasks on the worker pool (scan-pool.ts, workers/scan.ts). Each task scans
// every scanned shard over one range of values and merges them itself
// (flex-scan.ts), and the ranges (parts) come in value order, so the source
// reads its parts one after the other: the front end merges nothing, and a
// search costs it the same whatever the number of shards. Each task stops
// after `want` unique matches (offset + limit + 1: the +1 tells `limited`
// from `succeeded`).
//
// Pauses: a worker left without credits for a moment ends its task with
// `resumeFrom` (scan-protocol.ts), giving its thread back; so does a task
// that found its share of the answer (a later range's first task: one
// batch, openFlexSources), or ran out of its turn. The part runs on as a new
// task from resumeFrom once the source has nearly drained what the part
// holds, so at most one batch beyond the credits is ever buffered per part;
// a part the source has not come to yet runs on only until it has its share.

import { LIMITS } from '../../config/limits.js';
import { hasCode, STREAM_MESSAGES } from '../../errors/catalogue.js';
import type { TimeFence } from '../../model/filters.js';
import type { FlexQuery } from '../../query/flex-query.js';
import { END, HAS, WAIT, type FlexSource, type OpenSources, type SourceEvents, type SourceState } from '../sources.js';
import { BatchQueue } from '../flex-batch.js';
import type { ShardHandle, ShardReader } from '../../shard/shard-reader.js';
import type { FlexPlanShape, FlexRange } from './flex-plan.js';
import type { RunningScan, ScanPool } from './scan-pool.js';
import { INITIAL_CREDITS, type WorkerMessage } from './scan-protocol.js';

/** What every task of one search shares. */
interface SearchTasks {
  q: FlexQuery;
  fence: TimeFence;
  shards: ShardHandle[];
  /** Unscanned shards that may hold a matching value, when the fence needs their times; else empty. */
  others: ShardHandle[];
  pool: ScanPool;
  events: SourceEvents;
  /** Unique values the whole answer needs (offset + limit + 1). */
  want: number;
  credits: number;
}

/** One range of values and the batches its tasks have sent. */
class Part {
  readonly batches = new BatchQueue();
  finished = false;
  private scan: RunningScan | undefined;
  /** Values received from this part's tasks; a resumed task wants the rest. */
  private received = 0;
  /** Where the paused task stopped, until the next task starts there. */
  private resumeFrom: string | undefined;
  private closed = false;
  /**
   * The source reads this part now: a paused task may run on. Until then a
   * part runs on only until it has found its first task's share (firstWant),
   * and then waits with it.
   */
  private reading = false;

  /** `firstWant`: the first task's share of the answer (openFlexSources says why). */
  constructor(private readonly range: FlexRange, private readonly t: SearchTasks, private readonly firstWant: number) {}

  start(from = this.range.from, want = this.firstWant): void {
    const { q, pool } = this.t;
    this.scan = pool.run({
      kind: 'flex', shards: this.t.shards, target: q.target, method: q.method, pattern: q.pattern, exclude: q.exclude,
      typeFilter: q.typeFilter, fence: this.t.fence, others: this.t.others, from, to: this.range.to, want,
    }, (m) => this.onMessage(m), this.t.credits);
  }

  private onMessage(m: WorkerMessage): void {
    if (this.closed) return;
    if (m.type === 'batch') {
      this.batches.push(m.batch);
      this.received += m.batch.count;
    } else if (m.type === 'end') {
      this.scan = undefined;
      if (m.resumeFrom !== undefined && !m.cancelled && this.received < this.t.want) {
        this.resumeFrom = m.resumeFrom;
        this.resume();
      } else {
        this.finished = true;
      }
    } else {
      // A worker's own failure (it threw, its thread died) reaches the server's log through the outcome.
      if (hasCode(m, 'BAD_PATTERN')) this.t.events.fail(m.message);
      else this.t.events.fail(STREAM_MESSAGES.INTERNAL, m);
      return;
    }
    this.t.events.ready();
  }

  /** The source has come to this part. */
  read(): void {
    this.reading = true;
    this.resume();
  }

  /** Starts the rest of a paused part once at most one of its batches is left to merge, if it is read or short of its share. */
  private resume(): void {
    if (this.closed || this.resumeFrom === undefined || this.batches.length > 1) return;
    if (!this.reading && this.received >= this.firstWant) return;
    const from = this.resumeFrom;
    this.resumeFrom = undefined;
    this.start(from, this.t.want - this.received);
  }

  /** The lines of up to `max` values from the current one, within the first batch; a drained batch returns its credit. */
  take(max: number): Uint8Array {
    const { lines, drained } = this.batches.take(max);
    if (drained) {
      this.scan?.credit();
      this.resume();
    }
    return lines;
  }

  /** Stops the part; resolves once its worker has let go of the shards. */
  close(): Promise<void> {
    this.closed = true;
    const scan = this.scan;
    scan?.cancel();
    return scan?.done ?? Promise.resolve();
  }
}

/** The search's values: its parts, read in order. */
class RangesSource implements FlexSource {
  private current = 0;
  bulkCount = 0;

  constructor(readonly parts: Part[]) {
    parts[0]?.read();
  }

  state(): SourceState {
    for (;;) {
      const part = this.parts[this.current];
      if (!part) return END;
      if (part.batches.length > 0) return HAS;
      if (!part.finished) return WAIT;
      this.parts[++this.current]?.read();
    }
  }

  bulk(max: number): Uint8Array {
    const part = this.parts[this.current]!;
    const lines = part.take(max);
    this.bulkCount = part.batches.taken;
    return lines;
  }
}

/**
 * Credits cover a whole default-limit answer, so such a task never waits for
 * the reader. Larger answers keep INITIAL_CREDITS and pause when the reader
 * is slow: what a stalled stream holds is credits x batch per part, and 12
 * batches per part measured 5 MB per slow reader.
 */
function creditsFor(want: number): number {
  return want > LIMITS.resultsDefault + 1 ? INITIAL_CREDITS
    : Math.min(LIMITS.scanCreditsMax, Math.max(INITIAL_CREDITS, Math.ceil(want / LIMITS.batchItemsMax) + 1));
}

const handleOf = (s: ShardReader): ShardHandle => s.handle();

/**
 * Starts the scans of a plan, one task per range, and returns the one
 * source that reads them in order. `idle` runs once every task has ended
 * after close(): the shards' lease ends there.
 */
export function openFlexSources(plan: FlexPlanShape, q: FlexQuery, fence: TimeFence, want: number, pool: ScanPool,
  events: SourceEvents, idle: () => void): OpenSources<FlexSource> {
  if (plan.scanned.length === 0) return { sources: [], close: idle };
  const t: SearchTasks = {
    q, fence, shards: plan.scanned.map(handleOf), others: plan.others.map(handleOf), pool, events, want, credits: creditsFor(want),
  };
  // The first range's task looks for the whole answer. A later range's first
  // task looks for one batch: the answer reaches it only if the ranges before
  // fall short, and then finds a batch waiting while the rest of the range
  // runs on from where it stopped (resumeFrom). Asking it for more rendered
  // values nobody read: a dense 10,000-result answer over two ranges had the
  // second render 7,500 (a third of the workers' time).
  const parts = plan.ranges.map((r, i) => new Part(r, t, i === 0 ? want : Math.min(want, LIMITS.batchItemsMax)));
  for (const p of parts) p.start();
  return {
    sources: [new RangesSource(parts)],
    close: () => {
      void Promise.allSettled(parts.map((p) => p.close())).then(idle);
    },
  };
}
