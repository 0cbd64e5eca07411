// The paginator against a fake backend: sources are arrays of keys, some of
// which wait, and the sink is an array of lines.

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { turnsTaken } from '../../../src/lib/turns.js';
import { linesTo, paginate, paginateBulk, type Combiner, type Output, type Page } from '../../../src/search/paginator.js';
import type { ResultSink } from '../../../src/search/sink.js';
import {
  END, HAS, WAIT, type FlexSource, type OpenSources, type SortedSource, type SourceEvents, type SourceState,
} from '../../../src/search/sources.js';
import type { Terminator } from '../../../src/render/saf.js';

/** Items are keys; the string 'wait' makes the source WAIT until release() is called. */
class FakeSource implements SortedSource {
  at = 0;
  closed = false;
  private held = false;
  constructor(readonly name: string, readonly items: string[], private readonly events: () => SourceEvents) {}
  state(): SourceState {
    if (this.items[this.at] === 'wait') {
      if (!this.held) return WAIT;
      this.at++;
      this.held = false;
    }
    return this.at < this.items.length ? HAS : END;
  }
  key(): string {
    return this.items[this.at]!;
  }
  advance(): void {
    this.at++;
  }
  /** Lets the source past its next 'wait' and tells the paginator. */
  release(): void {
    this.held = true;
    this.events().ready();
  }
}

class FakeSink implements ResultSink {
  out: string[] = [];
  ended: [Terminator, string | undefined] | undefined;
  writable = true;
  aborted = false;
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
    this.out.push(lines);
  }
  bytes(lines: Uint8Array): void {
    this.text(Buffer.from(lines).toString('latin1'));
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

/** Joins the names of the sources holding a key: "k:a+b\n". */
class Names implements Combiner<FakeSource, string> {
  private parts: string[] = [];
  private k = '';
  add(s: FakeSource): void {
    this.k = s.key();
    this.parts.push(s.name);
  }
  take(): string | undefined {
    const r = `${this.k}:${this.parts.join('+')}\n`;
    this.parts = [];
    return this.k.startsWith('drop') ? undefined : r;
  }
}

function setup(lists: Record<string, string[]>) {
  let events: SourceEvents | undefined;
  const sources = Object.entries(lists).map(([n, items]) => new FakeSource(n, items, () => events!));
  let closed = 0;
  let cancelled = 0;
  const open = {
    open: (ev: SourceEvents): OpenSources<FakeSource> => {
      events = ev;
      return { sources, close: () => { closed++; for (const s of sources) s.closed = true; } };
    },
    cancel: () => { cancelled++; },
  };
  return { sources, open, closedCount: () => closed, cancelledCount: () => cancelled, events: () => events! };
}

const page = (p: Partial<Page> = {}): Page => ({ offset: 0, limit: 100, deadlineMs: 10_000, ...p });

/** A lone source that hands over runs of at most 3 items (a batch), as a lookup's lone shard does. */
class FakeBulkSource extends FakeSource {
  bulkCount = 0;
  bulk(max: number): string {
    let text = '';
    this.bulkCount = 0;
    while (this.bulkCount < Math.min(max, 3) && this.state() === HAS) {
      text += `${this.key()}:${this.name}\n`;
      this.advance();
      this.bulkCount++;
    }
    return text;
  }
}

/** The same runs as bytes: a flexible search's one source. */
class FakeByteSource implements FlexSource {
  constructor(private readonly runs: FakeBulkSource) {}
  state(): SourceState {
    return this.runs.state();
  }
  get bulkCount(): number {
    return this.runs.bulkCount;
  }
  bulk(max: number): Uint8Array {
    return Buffer.from(this.runs.bulk(max), 'latin1');
  }
}

/** Keys are `head|tail` (| standing for U+0001, below every character a head holds); keyHead() is the head. */
class HeadSource extends FakeSource {
  keysBuilt = 0;
  override key(): string {
    this.keysBuilt++;
    return super.key();
  }
  keyHead(): string {
    return super.key().split('\u0001')[0]!;
  }
}

describe('paginator', () => {
  it('merges by key heads, building whole keys only where heads tie, in whole-key order', async () => {
    const k = (head: string, tail: string): string => `${head}\u0001${tail}`;
    let events: SourceEvents | undefined;
    const sources = [
      new HeadSource('a', [k('b', '2'), k('c', '1'), k('cc', '0')], () => events!),
      new HeadSource('b', [k('a', '9'), k('b', '1'), k('c', '1')], () => events!),
    ];
    const open = { open: (ev: SourceEvents) => { events = ev; return { sources, close: () => undefined }; }, cancel: () => undefined };
    const sink = new FakeSink();
    await paginate(open, new Names(), linesTo(sink), page(), sink);
    expect(sink.out.join('').replaceAll('\u0001', '|')).toBe('a|9:b\nb|1:b\nb|2:a\nc|1:a+b\ncc|0:a\n');
    // Whole keys: the two ties (b, c) on both sources, and Names.add's one per source in each result.
    expect(sources[0]!.keysBuilt + sources[1]!.keysBuilt).toBe(4 + 6);
  });

  it('answers succeeded with no results when there are no sources', async () => {
    const f = setup({});
    const sink = new FakeSink();
    expect(await paginate(f.open, new Names(), linesTo(sink), page(), sink))
      .toEqual({ results: 0, terminator: 'succeeded', message: 'Query completed, no results found' });
    expect(sink.ended).toEqual(['succeeded', 'Query completed, no results found']);
  });

  it('gives the same answer with key heads as with whole keys (property)', async () => {
    const head = fc.stringMatching(/^[a-c]{0,3}$/);
    const list = fc.array(fc.tuple(head, fc.stringMatching(/^[0-2]{0,2}$/)), { maxLength: 12 })
      .map((items) => [...new Set(items.map(([h, t]) => `${h}\u0001${t}`))].sort());
    await fc.assert(fc.asyncProperty(fc.array(list, { minLength: 1, maxLength: 4 }), async (lists) => {
      const answer = async (Source: typeof FakeSource): Promise<string> => {
        let events: SourceEvents | undefined;
        const sources = lists.map((items, i) => new Source(String(i), items, () => events!));
        const open = { open: (ev: SourceEvents) => { events = ev; return { sources, close: () => undefined }; }, cancel: () => undefined };
        const sink = new FakeSink();
        await paginate(open, new Names(), linesTo(sink), page({ limit: 1000 }), sink);
        return sink.out.join('');
      };
      expect(await answer(HeadSource)).toBe(await answer(FakeSource));
    }), { numRuns: 300 });
  });

  it('merges sources by key and folds equal keys into one result', async () => {
    const f = setup({ a: ['b', 'd', 'e'], b: ['a', 'd'], c: ['c', 'e', 'f'] });
    const sink = new FakeSink();
    const o = await paginate(f.open, new Names(), linesTo(sink), page(), sink);
    expect(sink.out.join('')).toBe('a:b\nb:a\nc:c\nd:a+b\ne:a+c\nf:c\n');
    expect(sink.ended).toEqual(['succeeded', undefined]);
    expect(o).toEqual({ results: 6, terminator: 'succeeded' });
    expect(f.closedCount()).toBe(1);
  });

  it('skips offset results, writes limit, and says limited only when more exist', async () => {
    const f = setup({ a: ['a', 'c', 'e'], b: ['b', 'd'] });
    const sink = new FakeSink();
    expect(await paginate(f.open, new Names(), linesTo(sink), page({ offset: 1, limit: 2 }), sink))
      .toEqual({ results: 2, terminator: 'limited' });
    expect(sink.out.join('')).toBe('b:b\nc:a\n');
    expect(sink.ended).toEqual(['limited', 'Result limit reached']);

    const g = setup({ a: ['a', 'c'], b: ['b'] });
    const exact = new FakeSink();
    await paginate(g.open, new Names(), linesTo(exact), page({ limit: 3 }), exact);
    expect(exact.ended).toEqual(['succeeded', undefined]);
  });

  it('says no results with the spec message, and drops results the combiner filters out without counting them', async () => {
    const f = setup({ a: ['drop1', 'drop2'], b: [] });
    const sink = new FakeSink();
    expect(await paginate(f.open, new Names(), linesTo(sink), page({ limit: 1 }), sink))
      .toEqual({ results: 0, terminator: 'succeeded', message: 'Query completed, no results found' });
    expect(sink.ended).toEqual(['succeeded', 'Query completed, no results found']);

    const g = setup({ a: ['drop1', 'x', 'drop2'] });
    const one = new FakeSink();
    await paginate(g.open, new Names(), linesTo(one), page({ limit: 1 }), one);
    expect(one.out).toEqual(['x:a\n']);
    expect(one.ended).toEqual(['succeeded', undefined]);
  });

  it('waits for a source that has nothing yet, and goes on when it is ready', async () => {
    const f = setup({ a: ['a', 'wait', 'c'], b: ['b', 'd'] });
    const sink = new FakeSink();
    const done = paginate(f.open, new Names(), linesTo(sink), page(), sink);
    await new Promise((r) => setTimeout(r, 10));
    // b's 'b' may not pass a's unknown next key: only 'a' is out.
    expect(sink.out.join('')).toBe('a:a\n');
    f.sources[0]!.release();
    await done;
    expect(sink.out.join('')).toBe('a:a\nb:b\nc:a\nd:b\n');
  });

  it('stops while the sink pushes back and resumes when it drains', async () => {
    const f = setup({ a: ['a', 'b', 'c'] });
    const sink = new FakeSink();
    sink.setWritable(false);
    const done = paginate(f.open, new Names(), linesTo(sink), page(), sink);
    await new Promise((r) => setTimeout(r, 10));
    expect(sink.out).toEqual([]);
    sink.setWritable(true);
    await done;
    expect(sink.out.join('')).toBe('a:a\nb:a\nc:a\n');
  });

  it('ends failed with the source\'s message, and closes every source', async () => {
    const f = setup({ a: ['a', 'wait', 'b'] });
    const sink = new FakeSink();
    const done = paginate(f.open, new Names(), linesTo(sink), page(), sink);
    await new Promise((r) => setTimeout(r, 5));
    f.events().fail('Query timed out');
    expect(await done).toEqual({ results: 1, terminator: 'failed', message: 'Query timed out' });
    expect(sink.ended).toEqual(['failed', 'Query timed out']);
    expect(f.sources[0]!.closed).toBe(true);
  });

  it('a source that throws, in the first turn or a later one, ends the answer failed with the error, and closes every source', async () => {
    for (const at of [0, LIMITS.pageGroupsPerTurn + 3]) {
      const keys = Array.from({ length: at + 10 }, (_, i) => `k${String(i).padStart(6, '0')}`);
      const f = setup({ a: keys });
      const broken = new Error('shard unreadable');
      const source = f.sources[0]!;
      const state = source.state.bind(source);
      source.state = () => {
        if (source.at === at) throw broken;
        return state();
      };
      const sink = new FakeSink();
      // A throw in a later turn escaped as an unhandled rejection, which ends a Node process.
      expect(await paginate(f.open, new Names(), linesTo(sink), page({ limit: at + 10 }), sink))
        .toEqual({ results: at, terminator: 'failed', message: 'Internal error', error: broken });
      expect(sink.out.length).toBe(at);
      expect(sink.ended).toEqual(['failed', 'Internal error']);
      expect(f.closedCount()).toBe(1);
    }
  });

  it('hands the error of a failing source to the outcome for the log, and keeps it from the client', async () => {
    const f = setup({ a: ['a', 'wait', 'b'] });
    const sink = new FakeSink();
    const done = paginate(f.open, new Names(), linesTo(sink), page(), sink);
    await new Promise((r) => setTimeout(r, 5));
    const crash = { code: 'WORKER_FAILED', message: 'worker exited with code: 1' };
    f.events().fail('Internal error', crash);
    expect(await done).toEqual({ results: 1, terminator: 'failed', message: 'Internal error', error: crash });
    expect(sink.ended).toEqual(['failed', 'Internal error']);
  });

  it('a hang-up ends the search at once, writing nothing more', async () => {
    const f = setup({ a: ['a', 'wait', 'b'] });
    const sink = new FakeSink();
    const done = paginate(f.open, new Names(), linesTo(sink), page(), sink);
    await new Promise((r) => setTimeout(r, 5));
    sink.abort();
    expect((await done).terminator).toBe('failed');
    expect(sink.ended).toBeUndefined();
    expect(f.closedCount()).toBe(1);
  });

  it('a sink aborted before the start cancels the sources unopened', async () => {
    const f = setup({ a: ['a'] });
    const sink = new FakeSink();
    sink.abort();
    expect((await paginate(f.open, new Names(), linesTo(sink), page(), sink)).terminator).toBe('failed');
    expect([f.closedCount(), f.cancelledCount()]).toEqual([0, 1]);
  });

  it('ends failed at the deadline', async () => {
    const f = setup({ a: ['wait'] });
    const sink = new FakeSink();
    const o = await paginate(f.open, new Names(), linesTo(sink), page({ deadlineMs: 30 }), sink);
    expect(o.terminator).toBe('failed');
    expect(sink.ended).toEqual(['failed', 'Query timed out']);
  });

  it('gives the thread up every pageGroupsPerTurn results, skipped ones included', async () => {
    const n = LIMITS.pageGroupsPerTurn * 4;
    const keys = Array.from({ length: n }, (_, i) => `k${String(i).padStart(6, '0')}`);
    const f = setup({ a: keys });
    const sink = new FakeSink();
    const before = turnsTaken();
    // Every result is skipped by the offset: nothing is written, yet the merge must yield.
    const o = await paginate(f.open, new Names(), linesTo(sink), page({ offset: n }), sink);
    expect(o.results).toBe(0);
    // Counted turns, not a timer's ticks: a quiet machine visits all n within one timer period.
    expect(turnsTaken() - before).toBeGreaterThanOrEqual(3);
  });

  it('a lone source that hands over runs gives the same answer, offset, limit and terminator as one item at a time', async () => {
    const keys = Array.from({ length: 10 }, (_, i) => `k${i}`);
    for (const [offset, limit] of [[0, 100], [0, 4], [2, 5], [4, 6], [9, 1], [10, 1], [0, 10]] as const) {
      let events: SourceEvents | undefined;
      const src = new FakeBulkSource('a', keys, () => events!);
      const bulkSink = new FakeSink();
      const plan = {
        open: (ev: SourceEvents) => { events = ev; return { sources: [src], close: () => undefined }; },
        cancel: () => undefined,
      };
      const bulk = await paginate(plan, new Names(), linesTo(bulkSink), page({ offset, limit }), bulkSink);
      const f = setup({ a: keys });
      const oneSink = new FakeSink();
      const one = await paginate(f.open, new Names(), { write: (l: string) => oneSink.text(l) }, page({ offset, limit }), oneSink);
      expect([bulk, bulkSink.out.join(''), bulkSink.ended], `offset ${offset} limit ${limit}`)
        .toEqual([one, oneSink.out.join(''), oneSink.ended]);
      const bytesSrc = new FakeByteSource(new FakeBulkSource('a', keys, () => events!));
      const bytesSink = new FakeSink();
      const bytes = await paginateBulk({
        open: (ev: SourceEvents) => { events = ev; return { sources: [bytesSrc], close: () => undefined }; },
        cancel: () => undefined,
      }, page({ offset, limit }), bytesSink);
      expect([bytes, bytesSink.out.join(''), bytesSink.ended], `bytes: offset ${offset} limit ${limit}`)
        .toEqual([one, oneSink.out.join(''), oneSink.ended]);
    }
  });

  it('a summary counts what it would write, closes with one line, and ends succeeded once complete', async () => {
    const f = setup({ a: ['a', 'b', 'c', 'd'] });
    const sink = new FakeSink();
    let sum = 0;
    const summary: Output<string> = { write: () => { sum++; }, complete: () => sum >= 2, closing: (n) => `{"n":${n}}\n` };
    expect(await paginate(f.open, new Names(), summary, page(), sink)).toEqual({ results: 2, terminator: 'succeeded' });
    expect(sink.out).toEqual(['{"n":2}\n']);
    expect(sink.ended).toEqual(['succeeded', undefined]);
  });
});
