// Flexible search: plan a query over the snapshot's shards, dispatch the
// scans to the worker pool, merge their sorted streams, and enforce offset
// and limit on UNIQUE values (spec 4.2 rule 6).
//
// Order and paging: every shard's blob is sorted, every scan reports its
// matches in blob order, and the merge below is a k-way merge over shards,
// so results come in one stable, global order (bytewise by value) and an
// offset names the same rows on every call while the data is unchanged.
// A value found in several shards is reported once, with the union of its
// rrtypes. Each scan stops after offset + limit + 1 unique matches: the +1
// tells `limited` (more existed) from `succeeded`.
//
// Parallelism: a shard whose pattern has no usable trigrams is split into as
// many record ranges as the pool has threads; the ranges of one shard are
// consumed in order, so the merge still sees one sorted stream per shard.
//
// Pauses: a worker left without credits for a moment ends its task with
// `resumeAt` (scan-protocol.ts), because the merge may be waiting for a
// shard whose task is queued behind it; so does a first task that found its
// shard's share of the answer (firstWant below). The part then runs on as a new task
// from resumeAt once the merge has nearly drained what the part holds, so
// at most one batch beyond the credits is ever buffered per part.

import { LIMITS } from '../config/limits.js';
import { STREAM_MESSAGES } from '../errors/catalogue.js';
import type { FlexQuery } from '../query/flex-query.js';
import { compilePattern } from '../query/pattern.js';
import { ALL, type TrigramQuery } from '../model/trigram-query.js';
import { mayMatch } from '../shard/trigram-index.js';
import type { SafWriter } from '../server/saf-writer.js';
import type { ShardReader } from '../shard/shard-reader.js';
import type { TimeFence } from '../model/filters.js';
import { INITIAL_CREDITS, type FlexBatch, type WorkerMessage } from './local/scan-protocol.js';
import { uniteLines, valueLines, valueOf, type ValueLines } from './local/flex-batch.js';
import type { RunningScan, ScanPool } from './local/scan-pool.js';

export interface FlexPlanPart {
  shard: ShardReader;
  from: number;
  to: number;
}

/** Records per range below which splitting a shard across workers is not worth a task. */
const splitRecordsMin = 200_000;

/** What the front end learns from compiling a query's patterns once. */
export interface FlexPatterns {
  /** RE2's own words when the pattern or exclude does not compile (an in-stream `failed`). */
  error: string | undefined;
  /**
   * The pattern gives the trigram index something to work with. Such a
   * search is not split into ranges: each range's task would evaluate the
   * same posting lists of the whole shard again (the selective class cost a
   * third more at 10 M names).
   */
  indexable: boolean;
  /** The pattern's trigram query, for pruning shards that cannot match. */
  trigrams: TrigramQuery;
}

/** Compiles the pattern and exclude here, once; workers compile again (and cache) on their side. */
export function compileFlex(q: FlexQuery): FlexPatterns {
  try {
    const main = compilePattern(q.method, q.pattern);
    if (q.exclude !== undefined) compilePattern(q.method, q.exclude);
    return { error: undefined, indexable: main.trigrams.op !== 'all', trigrams: main.trigrams };
  } catch (err) {
    const msg = (err as { code?: string }).code === 'BAD_PATTERN' ? (err as Error).message : STREAM_MESSAGES.INTERNAL;
    return { error: msg, indexable: false, trigrams: ALL };
  }
}

export function planFlex(q: FlexQuery, patterns: FlexPatterns, fence: TimeFence, shards: readonly ShardReader[],
  threads: number): FlexPlanPart[][] {
  const splittable = !patterns.indexable;
  const plan: FlexPlanPart[][] = [];
  for (const shard of shards) {
    // A shard whose whole time range lies outside the fence cannot match.
    if (fence.lastAfter !== undefined && shard.timeMax <= fence.lastAfter) continue;
    if (fence.firstBefore !== undefined && shard.timeMin >= fence.firstBefore) continue;
    const cols = q.target === 'rrnames' ? shard.flexNames : shard.flexRdata;
    const records = cols.offsets.length - 1;
    if (records === 0) continue;
    // A shard whose index lacks a trigram the pattern needs gets no task:
    // at 10 M names the selective class touched one shard of three.
    if (patterns.indexable && !mayMatch(cols.trigrams, patterns.trigrams)) continue;
    const parts = splittable ? Math.max(1, Math.min(threads, Math.floor(records / splitRecordsMin))) : 1;
    const step = Math.ceil(records / parts);
    const list: FlexPlanPart[] = [];
    for (let from = 0; from < records; from += step) list.push({ shard, from, to: Math.min(records, from + step) });
    plan.push(list);
  }
  return plan;
}

interface Part {
  batches: FlexBatch[];
  /** Index of the next item in batches[0]. */
  at: number;
  finished: boolean;
  scan: RunningScan | undefined;
  /** Items received from this part's tasks; a resumed task wants the rest. */
  received: number;
  /** Where the paused task stopped, until the next task starts there. */
  resumeAt: number | undefined;
  /** Runs a task over [from, to) of the part's range (by default all of it). */
  start: (from?: number, want?: number) => RunningScan;
}

/** One shard: its parts are read in order. */
interface Stream {
  parts: Part[];
  current: number;
}

export interface FlexOutcome {
  results: number;
  terminator: 'succeeded' | 'limited' | 'failed';
  message?: string;
}

/**
 * Runs the query and writes the stream body (after `begin`) and its
 * terminator. Resolves when the stream has ended or the client has gone;
 * every scan has been told to stop by then.
 */
export function runFlexSearch(q: FlexQuery, patterns: FlexPatterns, eff: { limit: number; offset: number; fence: TimeFence },
  plan: FlexPlanPart[][], pool: ScanPool, out: SafWriter): Promise<FlexOutcome> {
  // A bad pattern fails fast, with RE2's own words, before any task runs.
  if (patterns.error !== undefined) {
    out.failed(patterns.error);
    return Promise.resolve({ results: 0, terminator: 'failed', message: patterns.error });
  }

  const want = eff.offset + eff.limit + 1;
  return new Promise<FlexOutcome>((resolve) => {
    let skipped = 0;
    let emitted = 0;
    let finished = false;
    let pumping = false;
    const streams: Stream[] = [];
    const all: Part[] = [];

    const finish = (o: FlexOutcome) => {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      for (const p of all) p.scan?.cancel();
      if (!out.done) {
        if (o.terminator === 'failed') out.failed(o.message ?? STREAM_MESSAGES.INTERNAL);
        else if (o.terminator === 'limited') out.limited(STREAM_MESSAGES.LIMITED);
        else if (emitted === 0) out.succeeded(STREAM_MESSAGES.NO_RESULTS);
        else out.succeeded();
      }
      resolve({ ...o, results: emitted });
    };

    const timer = setTimeout(() => finish({ results: emitted, terminator: 'failed', message: STREAM_MESSAGES.SCAN_TIMEOUT }),
      LIMITS.scanTimeoutMs);
    timer.unref();

    /** Starts the rest of a paused part once at most one of its batches is left to merge. */
    const resume = (part: Part) => {
      if (finished || part.resumeAt === undefined || part.batches.length > 1) return;
      const from = part.resumeAt;
      part.resumeAt = undefined;
      part.scan = part.start(from, want - part.received);
    };

    const onMessage = (part: Part) => (m: WorkerMessage) => {
      if (finished) return;
      if (m.type === 'batch') {
        part.batches.push(m.batch);
        part.received += m.batch.keys.length;
      } else if (m.type === 'end') {
        part.scan = undefined;
        if (m.resumeAt !== undefined && !m.cancelled && part.received < want) {
          part.resumeAt = m.resumeAt;
          resume(part);
        } else {
          part.finished = true;
        }
      } else {
        const msg = m.code === 'BAD_PATTERN' ? m.message : STREAM_MESSAGES.INTERNAL;
        finish({ results: emitted, terminator: 'failed', message: msg });
        return;
      }
      pump();
    };

    // Credits cover a whole default-limit answer, so such a task never waits
    // for the merge (which waits for a head from EVERY shard, some queued
    // behind this task). Larger answers keep INITIAL_CREDITS and pause when
    // the reader is slow: what a stalled stream holds is credits x batch per
    // part, and 12 batches per part measured 5 MB per slow reader.
    // A first task asks for its shard's fair share of the answer, with room
    // to spare, not all of it: the merge takes about want / shards from each
    // shard, and a task that produced all `want` items delayed the tasks of
    // the other shards queued behind it (the merge needs all their heads).
    // A part that delivered its share and is drained by the merge runs on
    // from where it stopped (resumeAt), so nothing is lost.
    const firstWant = Math.min(want, Math.max(LIMITS.batchItemsMax, Math.ceil((want * 3) / (2 * Math.max(1, plan.length)))));
    const credits = want > LIMITS.resultsDefault + 1 ? INITIAL_CREDITS
      : Math.min(LIMITS.scanCreditsMax, Math.max(INITIAL_CREDITS, Math.ceil(want / LIMITS.batchItemsMax) + 1));
    for (const parts of plan) {
      const s: Stream = { parts: [], current: 0 };
      for (const p of parts) {
        const part: Part = {
          batches: [], at: 0, finished: false, scan: undefined, received: 0, resumeAt: undefined,
          start: (from = p.from, partWant = firstWant) => pool.run({
            kind: 'flex', shard: { name: p.shard.name, buffer: p.shard.buffer }, target: q.target, method: q.method,
            pattern: q.pattern, exclude: q.exclude, typeFilter: q.typeFilter, fence: eff.fence,
            from, to: p.to, want: partWant,
          }, onMessage(part), credits),
        };
        s.parts.push(part);
        all.push(part);
      }
      streams.push(s);
    }

    /**
     * Key of a stream's head value, 'wait' while its current part has
     * nothing yet, undefined when exhausted. No key is 'wait': keys are
     * owner names (ending in a dot) and rdata text of name and text types
     * (ending in a dot or quoted).
     */
    const head = (s: Stream): string | 'wait' | undefined => {
      for (;;) {
        const part = s.parts[s.current];
        if (!part) return undefined;
        const batch = part.batches[0];
        if (batch) return batch.keys[part.at];
        if (!part.finished) return 'wait';
        s.current++;
      }
    };
    const advance = (s: Stream) => {
      const part = s.parts[s.current]!;
      part.at++;
      if (part.at >= part.batches[0]!.keys.length) {
        part.batches.shift();
        part.at = 0;
        part.scan?.credit();
        resume(part);
      }
    };

    const pump = () => {
      if (pumping || finished) return;
      pumping = true;
      try {
        while (!finished) {
          if (out.aborted) {
            finish({ results: emitted, terminator: 'failed', message: 'client went away' });
            return;
          }
          if (!out.writable) {
            void out.whenWritable().then(pump);
            return;
          }
          let min: string | undefined;
          for (const s of streams) {
            const h = head(s);
            if (h === 'wait') return;
            if (h !== undefined && (min === undefined || h < min)) min = h;
          }
          if (min === undefined) {
            finish({ results: emitted, terminator: 'succeeded' });
            return;
          }
          // Take the value from every stream that has it, uniting rrtypes.
          let lines = '';
          let firstBatch: FlexBatch | undefined;
          let firstAt = 0;
          let united: ValueLines | undefined;
          for (const s of streams) {
            if (head(s) !== min) continue;
            const part = s.parts[s.current]!;
            const batch = part.batches[0]!;
            if (firstBatch === undefined) {
              firstBatch = batch;
              firstAt = part.at;
              lines = valueLines(batch, part.at);
            } else {
              united = uniteLines(united ?? valueOf(firstBatch, firstAt), valueOf(batch, part.at));
              lines = united.text;
            }
            advance(s);
          }
          if (skipped < eff.offset) {
            skipped++;
            continue;
          }
          if (emitted >= eff.limit) {
            finish({ results: emitted, terminator: 'limited' });
            return;
          }
          emitted++;
          out.text(lines);
        }
      } finally {
        pumping = false;
      }
    };

    if (all.length === 0) {
      finish({ results: 0, terminator: 'succeeded' });
      return;
    }
    // A client that hangs up stops every scan at once (the workers check the
    // cancel flag every scan chunk), not at their next batch.
    out.onAbort(() => finish({ results: emitted, terminator: 'failed', message: 'client went away' }));
    // First parts of every shard before any later part: the merge needs a
    // head from every shard before it can emit, while a shard's later parts
    // are read only after its first, so on a busy pool they would hold
    // threads the first parts are queued behind.
    const depth = Math.max(...streams.map((s) => s.parts.length));
    for (let k = 0; k < depth; k++) {
      for (const s of streams) {
        const part = s.parts[k];
        if (part) part.scan = part.start();
      }
    }
  });
}
