// Flexible search over the local shards: one sorted source per shard, fed by
// scan tasks on the worker pool (scan-pool.ts, workers/scan.ts).
//
// A shard whose pattern has no usable trigrams is split into record ranges
// (parts), one task each; a shard's parts are read in order, so the shard is
// still one sorted stream. Each task stops after `want` unique matches
// (offset + limit + 1: the +1 tells `limited` from `succeeded`).
//
// Pauses: a worker left without credits for a moment ends its task with
// `resumeAt` (scan-protocol.ts), because the merge may be waiting for a
// shard whose task is queued behind it; so does a first task that found its
// shard's share of the answer (firstWant below). The part runs on as a new
// task from resumeAt once the merge has nearly drained what the part holds,
// so at most one batch beyond the credits is ever buffered per part.

import { LIMITS } from '../../config/limits.js';
import { STREAM_MESSAGES } from '../../errors/catalogue.js';
import { isFenced, type TimeFence } from '../../model/filters.js';
import type { FlexQuery } from '../../query/flex-query.js';
import { END, HAS, WAIT, type FlexSource, type OpenSources, type SourceEvents, type SourceState } from '../sources.js';
import { batchTypes, valueLines } from './flex-batch.js';
import type { ShardHandle, ShardReader } from '../../shard/shard-reader.js';
import type { FlexPlanPart, FlexPlanShape } from './flex-plan.js';
import type { RunningScan, ScanPool } from './scan-pool.js';
import { INITIAL_CREDITS, type FlexBatch, type WorkerMessage } from './scan-protocol.js';

/** What every task of one search shares. */
interface SearchTasks {
  q: FlexQuery;
  fence: TimeFence;
  /** Shards that may hold a matching value, when the fence needs their times; else empty. */
  candidates: readonly ShardReader[];
  pool: ScanPool;
  events: SourceEvents;
  /** Unique values the whole answer needs (offset + limit + 1). */
  want: number;
  /** A first task's share of `want`; see sharesOf. */
  firstWant: number;
  credits: number;
}

/** One record range of a shard and the batches its tasks have sent. */
class Part {
  readonly batches: FlexBatch[] = [];
  /** Index of the current value in batches[0]. */
  at = 0;
  finished = false;
  private scan: RunningScan | undefined;
  /** Values received from this part's tasks; a resumed task wants the rest. */
  private received = 0;
  /** Where the paused task stopped, until the next task starts there. */
  private resumeAt: number | undefined;
  private closed = false;

  constructor(private readonly range: FlexPlanPart, private readonly t: SearchTasks) {}

  start(from = this.range.from, want = this.t.firstWant): void {
    const { q, pool } = this.t;
    const own = this.range.shard;
    this.scan = pool.run({
      kind: 'flex', shard: handleOf(own), target: q.target, method: q.method, pattern: q.pattern, exclude: q.exclude,
      typeFilter: q.typeFilter, fence: this.t.fence, others: this.t.candidates.filter((s) => s !== own).map(handleOf),
      from, to: this.range.to, want,
    }, (m) => this.onMessage(m), this.t.credits);
  }

  private onMessage(m: WorkerMessage): void {
    if (this.closed) return;
    if (m.type === 'batch') {
      this.batches.push(m.batch);
      this.received += m.batch.keys.length;
    } else if (m.type === 'end') {
      this.scan = undefined;
      if (m.resumeAt !== undefined && !m.cancelled && this.received < this.t.want) {
        this.resumeAt = m.resumeAt;
        this.resume();
      } else {
        this.finished = true;
      }
    } else {
      // A worker's own failure (it threw, its thread died) reaches the server's log through the outcome.
      if (m.code === 'BAD_PATTERN') this.t.events.fail(m.message);
      else this.t.events.fail(STREAM_MESSAGES.INTERNAL, m);
      return;
    }
    this.t.events.ready();
  }

  /** Starts the rest of a paused part once at most one of its batches is left to merge. */
  private resume(): void {
    if (this.closed || this.resumeAt === undefined || this.batches.length > 1) return;
    const from = this.resumeAt;
    this.resumeAt = undefined;
    this.start(from, this.t.want - this.received);
  }

  /** Moves past the current value; a drained batch returns its credit to the worker. */
  advance(): void {
    this.at++;
    if (this.at < this.batches[0]!.keys.length) return;
    this.batches.shift();
    this.at = 0;
    this.scan?.credit();
    this.resume();
  }

  /** Lines of up to `max` values from the current one, within the first batch; moves past them. */
  take(max: number): { text: string; count: number } {
    const b = this.batches[0]!;
    const count = Math.min(max, b.keys.length - this.at);
    const text = b.text.slice(this.at === 0 ? 0 : b.ends[this.at - 1]!, b.ends[this.at + count - 1]!);
    this.at += count - 1;
    this.advance();
    return { text, count };
  }

  /** Stops the part; resolves once its worker has let go of the shards. */
  close(): Promise<void> {
    this.closed = true;
    const scan = this.scan;
    scan?.cancel();
    return scan?.done ?? Promise.resolve();
  }
}

/** One shard: its parts, read in order. */
class ShardSource implements FlexSource {
  private current = 0;

  constructor(readonly parts: Part[]) {}

  state(): SourceState {
    for (;;) {
      const part = this.parts[this.current];
      if (!part) return END;
      if (part.batches.length > 0) return HAS;
      if (!part.finished) return WAIT;
      this.current++;
    }
  }

  private get part(): Part {
    return this.parts[this.current]!;
  }

  key(): string {
    const p = this.part;
    return p.batches[0]!.keys[p.at]!;
  }

  lines(): string {
    const p = this.part;
    return valueLines(p.batches[0]!, p.at);
  }

  types(): ArrayLike<number> {
    const p = this.part;
    return batchTypes(p.batches[0]!, p.at);
  }

  advance(): void {
    this.part.advance();
  }

  bulkCount = 0;

  bulk(max: number): string {
    const { text, count } = this.part.take(max);
    this.bulkCount = count;
    return text;
  }
}

/**
 * Credits cover a whole default-limit answer, so such a task never waits for
 * the merge (which waits for a head from EVERY shard, some queued behind this
 * task). Larger answers keep INITIAL_CREDITS and pause when the reader is
 * slow: what a stalled stream holds is credits x batch per part, and 12
 * batches per part measured 5 MB per slow reader.
 * A first task asks for its shard's fair share of the answer, with room to
 * spare, not all of it: the merge takes about want / shards from each shard,
 * and a task that produced all `want` items delayed the tasks of the other
 * shards queued behind it (the merge needs all their heads). A part that
 * delivered its share and is drained by the merge runs on from where it
 * stopped (resumeAt), so nothing is lost.
 */
function sharesOf(want: number, shards: number): { firstWant: number; credits: number } {
  const firstWant = Math.min(want, Math.max(LIMITS.batchItemsMax, Math.ceil((want * 3) / (2 * Math.max(1, shards)))));
  const credits = want > LIMITS.resultsDefault + 1 ? INITIAL_CREDITS
    : Math.min(LIMITS.scanCreditsMax, Math.max(INITIAL_CREDITS, Math.ceil(want / LIMITS.batchItemsMax) + 1));
  return { firstWant, credits };
}

const handleOf = (s: ShardReader): ShardHandle => s.handle();

/**
 * Starts the scans of a plan and returns one source per scanned shard.
 * `idle` runs once every task has ended after close(): the shards' lease ends there.
 */
export function openFlexSources(plan: FlexPlanShape, q: FlexQuery, fence: TimeFence, want: number, pool: ScanPool,
  events: SourceEvents, idle: () => void): OpenSources<FlexSource> {
  const candidates = isFenced(fence) ? plan.candidates : [];
  const t: SearchTasks = { q, fence, candidates, pool, events, want, ...sharesOf(want, plan.parts.length) };
  const sources = plan.parts.map((ranges) => new ShardSource(ranges.map((r) => new Part(r, t))));
  // First parts of every shard before any later part: the merge needs a head
  // from every shard before it can emit, while a shard's later parts are read
  // only after its first, so on a busy pool they would hold threads the first
  // parts are queued behind.
  const depth = Math.max(0, ...sources.map((s) => s.parts.length));
  for (let k = 0; k < depth; k++) for (const s of sources) s.parts[k]?.start();
  return {
    sources,
    close: () => {
      void Promise.allSettled(sources.flatMap((s) => s.parts.map((p) => p.close()))).then(idle);
    },
  };
}
