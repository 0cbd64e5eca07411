// The paginator: one search's sources in, one answer out.
//
// It merges the sources by key (a k-way merge: sources are few, so a linear
// scan for the smallest key beats a heap), folds the items that several
// sources hold under one key into one result (a Combiner: flex unites rrtype
// lines, lookups add sightings), skips `offset` results, writes up to
// `limit`, and ends the stream with exactly one terminator:
//   succeeded  every source is exhausted (with the no-results message when
//              nothing was written), or the output says it is complete
//              (summarize's max_count);
//   limited    a result existed beyond `limit`;
//   failed     a source failed, the deadline passed, the sink was aborted,
//              a source or the output threw (STREAM_MESSAGES.INTERNAL; the
//              outcome carries the error for the caller's log), or the
//              sources say what they read was damaged meanwhile
//              (OpenSources.damaged), whatever the answer would have been.
// Offsets are stable: the order is the keys' order, the same on every call
// while the data is unchanged.
//
// Taking turns: the front end's one thread runs every stream, so the merge
// yields (lib/turns.ts) after LIMITS.pageGroupsPerTurn results visited,
// skipped or written alike: an offset of a million or a fence that drops
// every row must not hold the thread. It also stops while the sink pushes
// back and while any source has nothing ready (WAIT), and resumes when told.

import { LIMITS } from '../config/limits.js';
import { STREAM_MESSAGES } from '../errors/catalogue.js';
import { nextTurn } from '../lib/turns.js';
import type { Terminator } from '../render/saf.js';
import { writeLines, type ResultSink } from './sink.js';
import { HAS, WAIT, type BulkSource, type OpenSources, type SortedSource, type SourceEvents } from './sources.js';

/** Folds the items of one key into one result. */
export interface Combiner<S, R> {
  /** Takes the current item of `source` into the result being built. */
  add(source: S): void;
  /**
   * The result built since the last take(), or undefined when it is no
   * result (filtered out); starts afresh. The result may refer to the
   * sources' current items: it is written before they advance.
   */
  take(): R | undefined;
}

/** Where results go: lines to the sink, or (summaries) into a total. */
export interface Output<R> {
  write(result: R): void;
  /** True once the answer is complete although sources have more (summarize's max_count). */
  complete?(): boolean;
  /** A last line before the terminator (summarize's one object), given the results written. */
  closing?(results: number): string | undefined;
  /** Results are lines written as they are: a lone source's items may go out a run at a time. */
  readonly plain?: boolean;
  /** Hands what write() has gathered to the sink: called whenever the merge pauses, and before the terminator. */
  flush?(): void;
}

export interface Page {
  offset: number;
  limit: number;
  /** Wall time the whole answer may take, then it ends `failed`. */
  deadlineMs: number;
}

export interface PageOutcome {
  results: number;
  terminator: Terminator;
  message?: string;
  /** What a source or the output threw, when that ended the answer. */
  error?: unknown;
}

/**
 * What can be paginated: sources to open (now, or when a promise settles),
 * or, when the answer ends before they are opened, to give up.
 */
export interface Openable<S> {
  open(events: SourceEvents): OpenSources<S> | Promise<OpenSources<S>>;
  cancel(): void;
}

/**
 * Runs one search to its terminator: opens the sources (telling them how to wake the merge), or cancels them unopened.
 * The outcome comes at once when the answer ended within the call, else as a Promise.
 */
export function paginate<S extends SortedSource, R>(plan: Openable<S>, combiner: Combiner<S, R>, output: Output<R>,
  page: Page, sink: ResultSink): PageOutcome | Promise<PageOutcome> {
  return new Paginator<S, R>(combiner, output, page, sink).run(plan);
}

/** Runs one search whose one source's items go out as they are, a run at a time (a flexible search): same rules, same outcome. */
export function paginateBulk(plan: Openable<BulkSource>, page: Page, sink: ResultSink): PageOutcome | Promise<PageOutcome> {
  return new Paginator<BulkSource, never>(undefined, { write: () => undefined, plain: true }, page, sink).run(plan);
}

/** Output of plain results: the lines go to the sink. */
export function linesTo(sink: ResultSink): Output<string> {
  return { write: (lines) => sink.text(lines), plain: true };
}

const GONE = 'client went away';

/**
 * S is a SortedSource (merged by key) or a BulkSource (one, written a run at
 * a time); the entry points above keep the two apart.
 */
class Paginator<S, R> implements SourceEvents {
  private plan!: Openable<S>;
  private opened: OpenSources<S> | undefined;
  /** The sources are being opened (open() returned a promise): an end meanwhile closes them when they come. */
  private opening = false;
  /** Set once run() has returned a Promise (the answer did not end within it). */
  private resolve: ((o: PageOutcome) => void) | undefined;
  private outcome: PageOutcome | undefined;
  /**
   * The deadline's timer, armed only when the answer first has to wait: most
   * lookups end within their first turn, and a timer per request was a
   * measurable share of an exact lookup (wrk, bench/lookup.ts).
   */
  private timer: NodeJS.Timeout | undefined;
  private readonly started = performance.now();
  private finished = false;
  private pumping = false;
  /** A wake-up arrived while pumping: pump again before returning. */
  private again = false;
  private skipped = 0;
  private written = 0;
  private error: unknown;
  /** The sources holding the smallest key: group[0, groupSize) (a count, not the array's length: resetting a length is a runtime call). */
  private readonly group: SortedSource[] = [];
  private groupSize = 0;
  /** nextGroup's sources whose key heads tie. */
  private readonly tied: SortedSource[] = [];
  /** A lone bulk source has been told so (BulkSource.alone). */
  private toldAlone = false;

  constructor(private readonly combiner: Combiner<S, R> | undefined, private readonly output: Output<R>, private readonly page: Page,
    private readonly sink: ResultSink) {}

  /**
   * The outcome at once when the answer ended within this call (most lookups:
   * no Promise, no microtask on the hot path), else a Promise of it.
   */
  run(plan: Openable<S>): PageOutcome | Promise<PageOutcome> {
    this.plan = plan;
    try {
      if (this.sink.aborted) {
        this.finish('failed', GONE);
      } else {
        // A hang-up stops every source at once, not at its next item.
        this.sink.onAbort(() => this.finish('failed', GONE));
        const opened = plan.open(this);
        if (opened instanceof Promise) {
          this.opening = true;
          this.waiting();
          opened.then((o) => this.sourcesOpened(o), (err: unknown) => {
            this.opening = false;
            this.fail(STREAM_MESSAGES.INTERNAL, err);
          });
        } else {
          this.sourcesOpened(opened);
        }
      }
    } catch (err) {
      return Promise.reject(err);
    }
    if (this.outcome !== undefined) return this.outcome;
    return new Promise<PageOutcome>((resolve) => {
      this.resolve = resolve;
    });
  }

  /** SourceEvents: a source that answered WAIT has an item now (or has ended). */
  ready(): void {
    this.pump();
  }

  private sourcesOpened(o: OpenSources<S>): void {
    this.opening = false;
    this.opened = o;
    if (this.finished) o.close();
    else this.pump();
  }

  /** The answer has to wait (a source, the socket, a turn): from now on the deadline needs a timer. */
  private waiting(): void {
    if (this.timer !== undefined || this.finished) return;
    const left = this.started + this.page.deadlineMs - performance.now();
    if (left <= 0) return this.finish('failed', STREAM_MESSAGES.SCAN_TIMEOUT);
    this.timer = setTimeout(() => this.finish('failed', STREAM_MESSAGES.SCAN_TIMEOUT), left);
    this.timer.unref();
  }

  private finish(terminator: Terminator, message?: string): void {
    if (this.finished) return;
    const damaged = terminator === 'failed' ? undefined : this.opened?.damaged?.();
    if (damaged !== undefined) {
      terminator = 'failed';
      message = damaged;
    }
    this.finished = true;
    if (this.timer !== undefined) clearTimeout(this.timer);
    if (this.opened !== undefined) this.opened.close();
    else if (!this.opening) this.plan.cancel();
    if (!this.sink.aborted) {
      this.output.flush?.();
      const closing = terminator === 'failed' ? undefined : this.output.closing?.(this.written);
      if (closing !== undefined) this.sink.text(closing);
      if (terminator === 'succeeded' && this.written === 0 && closing === undefined) message = STREAM_MESSAGES.NO_RESULTS;
      this.sink.end(terminator, terminator === 'limited' ? STREAM_MESSAGES.LIMITED : message);
    }
    const outcome: PageOutcome = { results: this.written, terminator };
    if (message !== undefined) outcome.message = message;
    if (this.error !== undefined) outcome.error = this.error;
    this.outcome = outcome;
    this.resolve?.(outcome);
  }

  /** SourceEvents: a source cannot go on; the answer ends `failed` with `message`. */
  fail(message: string, error?: unknown): void {
    if (this.finished) return;
    this.error = error;
    this.finish('failed', message);
  }

  private pump(): void {
    if (this.pumping) {
      this.again = true;
      return;
    }
    this.pumping = true;
    try {
      do {
        this.again = false;
        this.step();
      } while (this.again && !this.finished);
      if (!this.finished) this.output.flush?.();
    } catch (err) {
      // A source that cannot read its shard, or a bug. pump() runs from
      // timers, promise callbacks and worker messages, where a throw would
      // take the whole server down and leave every open stream without its
      // terminator: this answer alone ends, `failed`.
      this.fail(STREAM_MESSAGES.INTERNAL, err);
    } finally {
      this.pumping = false;
    }
  }

  /** Merges until the answer ends, a source waits, the sink pushes back, or the turn is used up. */
  private step(): void {
    const sources = this.opened!.sources as readonly (SortedSource | BulkSource)[];
    const lone = sources.length === 1 ? sources[0]! : undefined;
    if (lone !== undefined && this.output.plain === true && typeof (lone as Partial<BulkSource>).bulk === 'function') {
      const bulk = lone as BulkSource;
      if (!this.toldAlone) {
        this.toldAlone = true;
        bulk.alone?.();
      }
      return this.stepBulk(bulk);
    }
    for (let budget: number = LIMITS.pageGroupsPerTurn; !this.finished; budget--) {
      if (this.sink.aborted) return this.finish('failed', GONE);
      if (!this.sink.writable) {
        this.waiting();
        void this.sink.whenWritable().then(() => this.pump());
        return;
      }
      if (budget === 0) {
        this.waiting();
        void nextTurn().then(() => this.pump());
        return;
      }
      const found = this.nextGroup();
      if (found === WAIT) return this.waiting();
      if (found === undefined) return this.finish('succeeded');
      // A result is valid until its group advances: it is written (or skipped) first.
      const result = this.combine();
      if (result !== undefined && this.skipped < this.page.offset) {
        this.skipped++;
      } else if (result !== undefined) {
        if (this.output.complete?.()) return this.finish('succeeded');
        if (this.written >= this.page.limit) return this.finish('limited');
        this.output.write(result);
        this.written++;
      }
      this.advanceGroup();
    }
  }

  /**
   * step() for one source whose items go out as they are: offset and limit
   * count items of whole runs, with the same rules and terminators.
   */
  private stepBulk(source: BulkSource): void {
    for (let budget: number = LIMITS.pageGroupsPerTurn; !this.finished;) {
      if (this.sink.aborted) return this.finish('failed', GONE);
      if (!this.sink.writable) {
        this.waiting();
        void this.sink.whenWritable().then(() => this.pump());
        return;
      }
      if (budget <= 0) {
        this.waiting();
        void nextTurn().then(() => this.pump());
        return;
      }
      const st = source.state();
      if (st === WAIT) return this.waiting();
      if (st !== HAS) return this.finish('succeeded');
      if (this.skipped < this.page.offset) {
        source.bulk(Math.min(budget, this.page.offset - this.skipped));
        this.skipped += source.bulkCount;
        budget -= source.bulkCount;
        continue;
      }
      if (this.written >= this.page.limit) return this.finish('limited');
      writeLines(this.sink, source.bulk(Math.min(budget, this.page.limit - this.written)));
      this.written += source.bulkCount;
      budget -= source.bulkCount;
    }
  }

  /** Fills `group` with the sources whose current key is the smallest; WAIT, or undefined when all are exhausted. */
  private nextGroup(): typeof WAIT | true | undefined {
    const sources = this.opened!.sources as readonly SortedSource[];
    const group = this.group;
    this.groupSize = 0;
    // One source (compacted data, or one shard that can match): no scan for a minimum, no key built.
    if (sources.length === 1) {
      const st = sources[0]!.state();
      if (st !== HAS) return st === WAIT ? WAIT : undefined;
      group[this.groupSize++] = sources[0]!;
      return true;
    }
    if (sources.length === 0) return undefined;
    // One pass: any source that waits stops the merge; with key heads the smallest is gathered on the way.
    const byHead = sources[0]!.keyHead !== undefined;
    let lone: SortedSource | undefined;
    let live = 0;
    let min: string | undefined;
    for (let i = 0; i < sources.length; i++) {
      const s = sources[i]!;
      const st = s.state();
      if (st === WAIT) return WAIT;
      if (st !== HAS) continue;
      lone = s;
      live++;
      if (!byHead) continue;
      const h = s.keyHead!();
      if (min === undefined || h < min) {
        min = h;
        this.groupSize = 0;
      }
      if (h === min) group[this.groupSize++] = s;
    }
    if (live === 0) return undefined;
    // One source left (an exact name that one shard holds): no key is built.
    if (live === 1) {
      group[0] = lone!;
      this.groupSize = 1;
      return true;
    }
    if (!byHead) {
      this.smallest(sources, sources.length);
    } else if (this.groupSize > 1) {
      // Heads tie: whole keys order those sources.
      const tied = this.tied;
      const n = this.groupSize;
      for (let i = 0; i < n; i++) tied[i] = group[i]!;
      this.smallest(tied, n);
    }
    return true;
  }

  /** Fills `group` with those of sources[0, n) that have an item and the smallest key. */
  private smallest(sources: readonly SortedSource[], n: number): void {
    const group = this.group;
    let min: string | undefined;
    this.groupSize = 0;
    for (let i = 0; i < n; i++) {
      const s = sources[i]!;
      if (s.state() !== HAS) continue;
      const k = s.key();
      if (min === undefined || k < min) {
        min = k;
        this.groupSize = 0;
      }
      if (k === min) group[this.groupSize++] = s;
    }
  }

  private combine(): R | undefined {
    const group = this.group;
    const combiner = this.combiner!;
    for (let i = 0; i < this.groupSize; i++) combiner.add(group[i]! as S);
    return combiner.take();
  }

  private advanceGroup(): void {
    const group = this.group;
    for (let i = 0; i < this.groupSize; i++) group[i]!.advance();
  }
}
