// One standing watch's answer: the objects its data tier's feed queues
// (watch-hub.ts), written to a ResultSink as they come, until one
// terminator ends it:
//   limited    `limit` objects have been written (at once: a watch has no
//              "one more" to wait for);
//   failed     the watch failed (its reader fell behind, its catch-up was
//              too large, the data tier failed), the sink was aborted (a
//              hang-up; the server's shutdown writes its own terminator),
//              or the pattern does not compile (RE2's words, before
//              anything runs).
// A watch never succeeds: it is open until one of those. There is no
// deadline either; keep-alives are the sink's (SafWriter writes `{}` after a
// silence). Each delivery is flushed to the socket at once (ResultSink.flush):
// a watch's results are news, not a page being filled. It takes turns as the
// paginator does: at most LIMITS.pageGroupsPerTurn objects per turn, and
// nothing while the sink pushes back (the feed goes on; what the reader does
// not take waits in the watch, within LIMITS.watchQueueBytesMax).

import { LIMITS } from '../config/limits.js';
import { STREAM_MESSAGES } from '../errors/catalogue.js';
import { nextTurn } from '../lib/turns.js';
import type { Terminator } from '../render/saf.js';
import type { PageOutcome } from './paginator.js';
import type { ResultSink } from './sink.js';
import type { WatchEvents, WatchHandle } from './watch-hub.js';

/** A watch planned by a backend (SearchBackend.planWatch): opened once the request is charged, or cancelled. */
export interface WatchPlan {
  /** RE2's own words when the pattern or exclude does not compile: the answer is an in-stream `failed`. */
  readonly error: string | undefined;
  open(events: WatchEvents): WatchHandle | Promise<WatchHandle>;
  /** Gives the watch's place back without opening it. */
  cancel(): void;
}

const GONE = 'client went away';

class WatchStream {
  private handle: WatchHandle | undefined;
  private finished = false;
  private pumping = false;
  private again = false;
  private turnWaiting = false;
  private written = 0;
  private error: unknown;
  private resolve!: (o: PageOutcome) => void;

  constructor(private readonly plan: WatchPlan, private readonly limit: number, private readonly sink: ResultSink) {}

  run(): Promise<PageOutcome> {
    return new Promise<PageOutcome>((resolve) => {
      this.resolve = resolve;
      const plan = this.plan;
      if (plan.error !== undefined) return this.finish('failed', plan.error);
      if (this.sink.aborted) return this.finish('failed', GONE);
      this.sink.onAbort(() => this.finish('failed', GONE));
      // The begin line goes now: the client learns it was admitted before anything is found.
      this.sink.flush?.();
      let opened: WatchHandle | Promise<WatchHandle>;
      try {
        opened = plan.open({ ready: () => this.pump(), fail: (message, error) => this.fail(message, error) });
      } catch (err) {
        return this.fail(STREAM_MESSAGES.INTERNAL, err);
      }
      if (opened instanceof Promise) {
        opened.then((h) => this.opened(h), (err: unknown) => this.fail(STREAM_MESSAGES.INTERNAL, err));
      } else {
        this.opened(opened);
      }
    });
  }

  private opened(h: WatchHandle): void {
    this.handle = h;
    if (this.finished) h.close();
    else this.pump();
  }

  private fail(message: string, error: unknown): void {
    if (this.finished) return;
    this.error = error;
    this.finish('failed', message);
  }

  private finish(terminator: Terminator, message?: string): void {
    if (this.finished) return;
    this.finished = true;
    if (this.handle !== undefined) this.handle.close();
    else this.plan.cancel();
    if (!this.sink.aborted) this.sink.end(terminator, terminator === 'limited' ? STREAM_MESSAGES.LIMITED : message);
    const outcome: PageOutcome = { results: this.written, terminator };
    if (message !== undefined) outcome.message = message;
    if (this.error !== undefined) outcome.error = this.error;
    this.resolve(outcome);
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
    } catch (err) {
      this.fail(STREAM_MESSAGES.INTERNAL, err);
    } finally {
      this.pumping = false;
    }
  }

  /** Writes what is queued, up to the turn's budget and the limit, while the sink takes it. */
  private step(): void {
    const h = this.handle;
    if (h === undefined || this.finished || this.turnWaiting) return;
    let wrote = false;
    for (let budget: number = LIMITS.pageGroupsPerTurn; ;) {
      if (this.sink.aborted) return this.finish('failed', GONE);
      if (!this.sink.writable) {
        void this.sink.whenWritable().then(() => this.pump());
        break;
      }
      if (budget === 0) {
        this.turnWaiting = true;
        void nextTurn().then(() => {
          this.turnWaiting = false;
          this.pump();
        });
        break;
      }
      const { text, count } = h.take(Math.min(budget, this.limit - this.written));
      if (count === 0) {
        if (h.endsWith !== undefined) {
          if (wrote) this.sink.flush?.();
          return this.finish('failed', h.endsWith);
        }
        break;
      }
      this.sink.text(text);
      this.written += count;
      budget -= count;
      wrote = true;
      if (this.written >= this.limit) return this.finish('limited');
    }
    if (wrote) this.sink.flush?.();
  }
}

/** Runs a planned watch to its terminator, writing each delivery to `sink` as it comes. */
export function runWatch(plan: WatchPlan, limit: number, sink: ResultSink): Promise<PageOutcome> {
  return new WatchStream(plan, limit, sink).run();
}
