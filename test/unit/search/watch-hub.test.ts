// The tier-neutral part of standing watches (src/search/watch-hub.ts and
// watch-stream.ts): what a watch keeps of what a feed offers, the order and
// bounds of what it queues, the catch-up's hand-over, and the stream that
// writes it to a sink with its one terminator. The sink is an array; the
// feeds are exercised end to end in test/integration/watch*.test.ts.

import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { ApiError, STREAM_MESSAGES } from '../../../src/errors/catalogue.js';
import type { TimeFence } from '../../../src/model/filters.js';
import type { Terminator } from '../../../src/render/saf.js';
import { parseWatchQuery, type WatchQuery } from '../../../src/query/watch-query.js';
import type { ResultSink } from '../../../src/search/sink.js';
import {
  CatchUpCollector, compileWatch, WatchHub, type Watch, type WatchEvents, type WatchTuple,
} from '../../../src/search/watch-hub.js';
import { runWatch, type WatchPlan } from '../../../src/search/watch-stream.js';

const T = 1_790_000_000;

class Sink implements ResultSink {
  out = '';
  ended: [Terminator, string | undefined] | undefined;
  writable = true;
  aborted = false;
  flushes = 0;
  private wakers: (() => void)[] = [];
  private abortFns: (() => void)[] = [];
  whenWritable(): Promise<void> {
    return this.writable ? Promise.resolve() : new Promise((r) => this.wakers.push(r));
  }
  onAbort(f: () => void): void {
    this.abortFns.push(f);
  }
  text(lines: string): void {
    expect(this.ended).toBeUndefined();
    this.out += lines;
  }
  bytes(lines: Uint8Array): void {
    this.text(Buffer.from(lines).toString('latin1'));
  }
  flush(): void {
    this.flushes++;
  }
  end(cond: Terminator, msg?: string): void {
    expect(this.ended).toBeUndefined();
    this.ended = [cond, msg];
  }
  setWritable(w: boolean): void {
    this.writable = w;
    if (w) for (const f of this.wakers.splice(0)) f();
  }
  abort(): void {
    this.aborted = true;
    for (const f of this.abortFns.splice(0)) f();
  }
}

function query(path: string, params: Record<string, string> = {}): WatchQuery {
  return parseWatchQuery(path.split('/'), new Map(Object.entries(params)), T);
}

interface Opened {
  hub: WatchHub;
  w: Watch;
  failures: [string, unknown][];
  ready: number;
}

interface Options {
  fence?: TimeFence;
  limit?: number;
  hub?: WatchHub;
}

/** A watch on `hub`, its events to `events`, matched from now on. */
function watchOn(hub: WatchHub, q: WatchQuery, opts: Options, events: WatchEvents): Watch {
  const compiled = compileWatch(q);
  if (compiled.error !== undefined) throw new Error(compiled.error);
  hub.reserve();
  const w = hub.create(q, opts.fence ?? {}, opts.limit ?? 100, compiled, events);
  hub.add(w);
  return w;
}

function open(q: WatchQuery, opts: Options = {}): Opened {
  const hub = opts.hub ?? new WatchHub();
  const o: Opened = { hub, w: undefined as unknown as Watch, failures: [], ready: 0 };
  o.w = watchOn(hub, q, opts, { ready: () => o.ready++, fail: (m, e) => o.failures.push([m, e]) });
  return o;
}

/** A plan as a backend makes it: the watch is made when the stream opens it. */
function planned(q: WatchQuery, opts: Options = {}): { hub: WatchHub; plan: WatchPlan; watch: () => Watch } {
  const hub = opts.hub ?? new WatchHub();
  let w: Watch | undefined;
  const plan: WatchPlan = { error: undefined, open: (events) => (w = watchOn(hub, q, opts, events)), cancel: () => undefined };
  return { hub, plan, watch: () => w! };
}

const tuple = (value: string, type: number, first: number, last = first): WatchTuple => ({ value, type, first, last });
const line = (name: string, type: string, first: number) => `{"obj":{"rrname":"${name}","rrtype":"${type}","time_first":${first}}}\n`;
const drain = (w: Watch) => w.take(Infinity).text;

describe('a standing watch', () => {
  it('parses: time_first_after is inclusive and asks for a catch-up; without it the watch counts from now', () => {
    expect(query('regex/rrnames/x')).toMatchObject({ since: T, catchUp: false, fence: {}, offset: 0, typeFilter: 'all' });
    expect(query('glob/rdata/*.x./CNAME', { time_first_after: '-60', exclude: 'y', limit: '5' }))
      .toMatchObject({ method: 'glob', target: 'rdata', since: T - 60, catchUp: true, exclude: 'y', limit: 5, typeFilter: 5 });
    expect(() => query('')).toThrow(new ApiError('MISSING_SEGMENT'));
    expect(() => query('lookup/rrnames/x')).toThrow(new ApiError('BAD_SEARCH_METHOD'));
    for (const p of ['offset', 'time_first_before', 'time_last_before', 'time_last_after', 'aggr', 'humantime', 'max_count']) {
      expect(() => query('regex/rrnames/x', { [p]: '1' }), p).toThrow(new ApiError('UNPARSABLE_REQUEST'));
    }
  });

  it('keeps what its rrtype, since and the key\'s fence allow, and queues a batch in time_first order', () => {
    const o = open(query('regex/rrnames/x/A', { time_first_after: String(T - 10) }), { fence: { lastAfter: T - 5 } });
    const w = o.w;
    w.caughtUp([], false);
    for (const t of [tuple('b.x.', 1, T), tuple('a.x.', 1, T), tuple('c.x.', 1, T - 1), tuple('a.x.', 28, T), tuple('old.x.', 1, T - 11),
      tuple('stale.x.', 1, T - 9, T - 6), tuple('z.x.', 1, T - 10, T)]) w.offer(t);
    expect(drain(w)).toBe('');
    o.hub.commit();
    expect(o.ready).toBe(1);
    expect(drain(w)).toBe(line('z.x.', 'A', T - 10) + line('c.x.', 'A', T - 1) + line('a.x.', 'A', T) + line('b.x.', 'A', T));
  });

  it('holds what comes during its catch-up, then sends the catch-up, then what it held that the catch-up had not', () => {
    const o = open(query('regex/rrnames/x', { time_first_after: String(T - 100) }));
    o.w.offer(tuple('live.x.', 1, T));
    o.w.offer(tuple('both.x.', 1, T - 1));
    o.hub.commit();
    expect(drain(o.w)).toBe('');
    o.w.caughtUp([tuple('old.x.', 1, T - 50), tuple('both.x.', 1, T - 1)], false);
    expect(drain(o.w)).toBe(line('old.x.', 'A', T - 50) + line('both.x.', 'A', T - 1) + line('live.x.', 'A', T));
    expect(o.w.endsWith).toBeUndefined();
  });

  it('ends after a catch-up that found more than it may hold, once the reader has taken it', () => {
    const o = open(query('regex/rrnames/x', { time_first_after: String(T - 100) }), { limit: LIMITS.watchCatchUpTuplesMax + 1 });
    o.w.caughtUp([tuple('a.x.', 1, T)], true);
    expect(o.w.ended).toBe(true);
    expect(o.hub.watches.size).toBe(0);
    expect(drain(o.w)).toBe(line('a.x.', 'A', T));
    expect(o.w.endsWith).toBe(STREAM_MESSAGES.WATCH_CATCH_UP_TOO_LARGE);
    // Cut at the client's own limit instead: the limit ends the stream.
    const p = open(query('regex/rrnames/x', { time_first_after: String(T - 100) }), { limit: 1 });
    p.w.caughtUp([tuple('a.x.', 1, T)], true);
    expect(p.w.endsWith).toBeUndefined();
  });

  it('fails, dropping what it held, once its reader is LIMITS.watchQueueBytesMax behind', () => {
    const o = open(query('regex/rrnames/x'));
    const name = `${'n'.repeat(200)}.x.`;
    const perLine = line(name, 'A', T).length;
    for (let i = 0; i * perLine <= LIMITS.watchQueueBytesMax; i++) {
      o.w.offer(tuple(`${i}${name}`, 1, T));
      o.hub.commit();
    }
    expect(o.failures).toEqual([[STREAM_MESSAGES.WATCH_BEHIND, undefined]]);
    expect(o.w.take(10)).toEqual({ text: '', count: 0 });
    expect(o.hub.watches.size).toBe(0);
  });

  it('is one of at most LIMITS.watchesMax per process', () => {
    const hub = new WatchHub();
    for (let i = 0; i < LIMITS.watchesMax; i++) hub.reserve();
    expect(() => hub.reserve()).toThrow(new ApiError('OVERLOADED'));
    hub.unreserve();
    const { w } = open(query('regex/rrnames/x'), { hub });
    expect(() => hub.reserve()).toThrow(new ApiError('OVERLOADED'));
    w.close();
    hub.reserve();
  });

  it('catches up with the earliest tuples, counting the rest', () => {
    const c = new CatchUpCollector(3);
    for (let i = 10; i > 0; i--) c.add(tuple(`v${i}.`, 1, T + i));
    const { tuples, more } = c.result();
    expect(tuples.map((t) => t.value)).toEqual(['v1.', 'v2.', 'v3.']);
    expect(more).toBe(true);
    expect(new CatchUpCollector(3).result()).toEqual({ tuples: [], more: false });
  });
});

describe('a watch\'s stream', () => {
  it('writes each batch as it comes and flushes it, and ends `limited` at once at the limit', async () => {
    const o = planned(query('regex/rrnames/x'), { limit: 3 });
    const sink = new Sink();
    const done = runWatch(o.plan, 3, sink);
    expect(sink.flushes).toBe(1); // the begin line, before anything is found
    o.watch().offer(tuple('a.x.', 1, T));
    o.hub.commit();
    expect(sink.out).toBe(line('a.x.', 'A', T));
    expect(sink.flushes).toBe(2);
    o.watch().offer(tuple('b.x.', 1, T));
    o.watch().offer(tuple('c.x.', 1, T));
    o.watch().offer(tuple('d.x.', 1, T));
    o.hub.commit();
    expect(await done).toEqual({ results: 3, terminator: 'limited', message: undefined });
    expect(sink.out).toBe(line('a.x.', 'A', T) + line('b.x.', 'A', T) + line('c.x.', 'A', T));
    expect(sink.ended).toEqual(['limited', STREAM_MESSAGES.LIMITED]);
    expect(o.hub.watches.size).toBe(0);
  });

  it('waits for a sink that pushes back, and ends `failed` when the watch fails or the client goes', async () => {
    const o = planned(query('regex/rrnames/x'));
    const sink = new Sink();
    const done = runWatch(o.plan, 100, sink);
    sink.setWritable(false);
    o.watch().offer(tuple('a.x.', 1, T));
    o.hub.commit();
    expect(sink.out).toBe('');
    sink.setWritable(true);
    await Promise.resolve();
    expect(sink.out).toBe(line('a.x.', 'A', T));
    o.watch().fail(STREAM_MESSAGES.WATCH_BEHIND);
    expect(await done).toMatchObject({ results: 1, terminator: 'failed', message: STREAM_MESSAGES.WATCH_BEHIND });
    expect(sink.ended).toEqual(['failed', STREAM_MESSAGES.WATCH_BEHIND]);

    const p = planned(query('regex/rrnames/x'));
    const gone = new Sink();
    const ended = runWatch(p.plan, 100, gone);
    gone.abort();
    expect(await ended).toMatchObject({ terminator: 'failed', message: 'client went away' });
    expect(gone.ended).toBeUndefined();
    expect(p.hub.watches.size).toBe(0);
  });

  it('answers a bad pattern in-stream and opens nothing', async () => {
    const sink = new Sink();
    const plan = { error: 'invalid regular expression at position 3: missing )', open: () => { throw new Error('opened'); }, cancel: () => 0 };
    expect(await runWatch(plan, 10, sink)).toMatchObject({ results: 0, terminator: 'failed' });
    expect(sink.ended).toEqual(['failed', plan.error]);
  });
});
