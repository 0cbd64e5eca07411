// The scan pool (search/local/scan-pool.ts) with real scan workers
// (dist/workers/scan.js: run `npm run build` first) over real shards written
// by the real `rrscan ingest`. What the front end relies on: a task's lines
// arrive in batches and end with exactly one `end` or `error`; a task paused
// for credits resumes where it stopped, nothing lost or sent twice; a cancel
// ends the task; and the queue bound counts a task until its stream ends
// (not a message later, which answered 503 to a client's next search).

import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ScanPool } from '../../../../src/search/local/scan-pool.js';
import type { FlexTask, WorkerMessage } from '../../../../src/search/local/scan-protocol.js';
import { ShardReader, type ShardHandle } from '../../../../src/shard/shard-reader.js';
import { ingestNdjson, tempPaths } from '../../../helpers/rrscan.js';

const paths = tempPaths();
let shards: ShardHandle[];
let pool: ScanPool;

// Two shards whose names overlap (1000..1999 in both): the task merges them into unique values.
const names = (from: number, to: number) => Array.from({ length: to - from }, (_, k) => `n${from + k}.pool.example.`);
const records = (ns: string[]) => ns.map((rrname, i) => ({
  count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000 + i, rrname, rrtype: 'A', bailiwick: 'example.',
  rdata: [`10.0.${(i >> 8) & 255}.${i & 255}`],
}));
const EVERY_NAME = names(0, 3000);
/** The lines a full scan for `.` over the rrnames must give: each unique name once, in byte order. */
const EXPECTED = [...EVERY_NAME].sort().map((n) => `{"obj":{"rrname":"${n}","rrtype":"A"}}`);

type Task = Omit<FlexTask, 'port' | 'control' | 'turnMs'>;
const task = (over: Partial<Task> = {}): Task => ({
  kind: 'flex', shards, target: 'rrnames', method: 'regex', pattern: '\\.pool\\.example\\.$', exclude: undefined,
  typeFilter: 'all', fence: {}, others: [], from: '', to: undefined, want: 1_000_000, ...over,
});

interface Outcome {
  lines: string[];
  batches: number;
  last: WorkerMessage;
  /** pool.wouldOverflow(1) as seen from inside the last message's callback. */
  overflowAtEnd: boolean;
}

/**
 * Runs one task to its last message; returns a credit per batch unless
 * `stingy` (a reader that never drains). The default credits outnumber the
 * batches of any task here, so only a stingy task pauses for credits
 * however slowly this thread takes the batches (the machine may be busy).
 */
function scan(p: ScanPool, t: Task, credits = 64, stingy = false): Promise<Outcome> & { cancel(): void } {
  let cancel = () => {};
  const result = new Promise<Outcome>((resolve) => {
    const lines: string[] = [];
    let batches = 0;
    const running = p.run(t, (m) => {
      if (m.type === 'batch') {
        batches++;
        lines.push(...Buffer.from(m.batch.bytes).toString('latin1').split('\n').slice(0, -1));
        if (!stingy) running.credit();
        return;
      }
      const overflowAtEnd = p.wouldOverflow(1);
      void running.done.then(() => resolve({ lines, batches, last: m, overflowAtEnd }));
    }, credits);
    cancel = () => running.cancel();
  });
  return Object.assign(result, { cancel: () => cancel() });
}

beforeAll(() => {
  const dir = paths.fresh();
  ingestNdjson(dir, records(names(0, 2000)), 'a.ndjson');
  ingestNdjson(dir, records(names(1000, 3000)), 'b.ndjson');
  const manifest = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { shards: { file: string }[] };
  shards = manifest.shards.map((s) => ShardReader.map(path.join(dir, s.file)));
  expect(shards).toHaveLength(2);
  // A turn longer than any task here: a task ends early only when a test makes it.
  pool = new ScanPool({ threads: 1, queueMax: 0, turnMs: 600_000 });
}, 120_000);

afterAll(async () => {
  await pool?.close();
  paths.removeAll();
});

describe('ScanPool with real scan workers', () => {
  it('a task gives every matching unique value once, in order, in batches, then one `end`', async () => {
    const before = pool.stats();
    const r = await scan(pool, task());
    expect(r.last).toMatchObject({ type: 'end', cancelled: false });
    expect(r.last.type === 'end' && r.last.resumeFrom).toBeUndefined();
    expect(r.lines).toEqual(EXPECTED);
    // 3,000 values do not fit one batch (LIMITS.batchItemsMax).
    expect(r.batches).toBeGreaterThan(1);
    const after = pool.stats();
    expect(after.started - before.started).toBe(1);
    expect(after).toMatchObject({ threads: 1, running: 0, queued: 0 });
    expect(after.heldSeconds).toBeGreaterThan(before.heldSeconds);
  });

  it('the pattern, the exclusion and the range each narrow what a task sends', async () => {
    const r = await scan(pool, task({ pattern: '^n2[0-9]{3}\\.', exclude: '5\\.pool', from: 'n2100', to: 'n2200' }));
    expect(r.lines).toEqual(EXPECTED.filter((l) => /"n21\d\d\./.test(l) && !/5\.pool/.test(l)));
    expect(r.lines).toHaveLength(90);
  });

  it('a task whose reader takes no batch pauses and says where to resume; the resumed tasks add up to the whole answer', async () => {
    const lines: string[] = [];
    let from = '';
    let tasks = 0;
    for (;;) {
      // One credit, never returned: one batch, then the worker gives its thread up (LIMITS.scanCreditWaitMs).
      const r = await scan(pool, task({ from }), 1, true);
      tasks++;
      expect(r.batches).toBeLessThanOrEqual(2);
      lines.push(...r.lines);
      expect(r.last.type).toBe('end');
      if (r.last.type !== 'end' || r.last.resumeFrom === undefined) break;
      from = r.last.resumeFrom;
    }
    expect(tasks).toBeGreaterThan(1);
    expect(lines).toEqual(EXPECTED);
  });

  it('a task cancelled before it ran ends cancelled, without a batch', async () => {
    const r = scan(pool, task(), 0);
    r.cancel();
    const out = await r;
    expect(out.last).toMatchObject({ type: 'end', cancelled: true });
    expect(out.batches).toBe(0);
  });

  it('a task that fails in its worker ends with one error carrying the worker\'s message, and frees its place', async () => {
    // The front end validates patterns first; a bad one here makes the worker's task throw before it scans.
    const r = await scan(pool, task({ pattern: '(' }));
    expect(r.last).toMatchObject({ type: 'error', message: 'invalid regular expression at position 0: missing ): (' });
    expect(r.lines).toEqual([]);
    expect(r.overflowAtEnd).toBe(false);
  });

  it('counts a task against the queue from run() until its stream ends, not a message later', async () => {
    // threads 1, queue 0: an idle pool takes a search of any size...
    expect(pool.wouldOverflow(5)).toBe(false);
    const first = scan(pool, task());
    // ...a busy one refuses what would have to wait.
    expect(pool.wouldOverflow(1)).toBe(true);
    expect(pool.stats()).toMatchObject({ running: 1, queued: 0 });
    const second = scan(pool, task({ pattern: '^n1' }));
    expect(pool.stats()).toMatchObject({ running: 1, queued: 1 });
    const [a, b] = await Promise.all([first, second]);
    expect(a.lines).toEqual(EXPECTED);
    expect(b.lines).toEqual(EXPECTED.filter((l) => l.startsWith('{"obj":{"rrname":"n1')));
    // When the second stream ended the first had long ended: the pool was free at once.
    expect(b.overflowAtEnd).toBe(false);
    expect(pool.stats()).toMatchObject({ running: 0, queued: 0 });
  });
});
