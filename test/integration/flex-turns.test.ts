// A flexible search that scans for longer than a scan task's turn
// (--scan-turn-ms): the task gives its worker up and a new one resumes where
// every shard's cursor has got to. The cursors of one task move in step
// (flex-scan.ts merge), so the resume point is real progress. When each
// cursor was searched to its next match in turn, a pattern that matched
// rarely had the first cursor search past the turn while the others had not
// started: the resume point stayed at the start, and each new task searched
// the same bytes again (a match-nothing search of 100 M RRsets took 94 s
// instead of 1). Here three shards whose values interleave, each taking
// longer to search than a turn, must answer exactly and in few tasks.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addKey, answer, begin, body, get, ingestNdjson, metric, none, ok, startServer, tempPaths, type Server,
} from '../helpers/rrscan.js';

const SHARDS = 3;
const PER_SHARD = 50_000;
/** Every NEEDLE_EVERY-th name carries a run of 40 digits; no other name has more than 6 in a row. */
const NEEDLE_EVERY = 9_973;

const paths = tempPaths();
let server: Server;
let key: string;

/** About 200 bytes: the three shards hold some 30 MB of names, longer to search than a 10 ms turn. */
function nameOf(i: number): string {
  // Letters only: the digit runs are the needles'.
  const pad = ((i * 2_654_435_761) >>> 0).toString(26).replace(/./g, (c) => String.fromCharCode(97 + parseInt(c, 26)))
    .padStart(7, 'k').repeat(8).slice(0, 56);
  const needle = i % NEEDLE_EVERY === 0 ? `x${String(i).padStart(40, '7')}.` : '';
  return `n${i}.${pad}.${needle}${pad}.${pad}.turns.example.`;
}

const record = (i: number) => ({
  count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000 + i, rrname: nameOf(i), rrtype: 'A',
  bailiwick: 'example.', rdata: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`],
});

beforeAll(async () => {
  const dir = paths.fresh();
  // Shard s holds the names i with i % SHARDS == s: every shard spans the whole value range.
  for (let s = 0; s < SHARDS; s++) {
    ingestNdjson(dir, Array.from({ length: PER_SHARD }, (_, k) => record(k * SHARDS + s)), `s${s}.ndjson`);
  }
  key = addKey(dir);
  server = await startServer(dir, ['--scan-turn-ms', '10', '--workers', '2', '--metrics-port', '0']);
}, 120_000);

afterAll(async () => {
  await server?.close();
  paths.removeAll();
});

describe('a flexible search longer than a scan turn', () => {
  it('answers a pattern that matches nothing, after searching each byte about once', async () => {
    const tasks0 = await metric(server, 'rrscan_scan_tasks_started_total');
    const turns0 = await metric(server, 'rrscan_scan_turns_total');
    const r = await get(server, '/pdns/v2/regex/rrnames/%5B0-9%5D%7B50%2C%7D', { 'X-API-Key': key });
    expect(r.status).toBe(200);
    expect(answer(r)).toBe(body(begin, none));
    const turns = (await metric(server, 'rrscan_scan_turns_total')) - turns0;
    const tasks = (await metric(server, 'rrscan_scan_tasks_started_total')) - tasks0;
    // The search did outlast its turns (else this test could not fail) ...
    expect(turns).toBeGreaterThan(0);
    // ... and each new task went on from where the last stopped: searching the 30 MB took 5 turns here (a loaded
    // machine stretches a turn's share of the search: 8 times as many is allowed). Searching the first shard to its
    // next match, then the next shard, took 95: each task searched much of the same bytes again.
    expect(turns).toBeLessThanOrEqual(40);
    expect(tasks).toBeLessThanOrEqual(turns + 2);
  }, 60_000);

  it('finds the rare matches in every shard, in order', async () => {
    const needles: string[] = [];
    for (let i = 0; i < SHARDS * PER_SHARD; i += NEEDLE_EVERY) needles.push(nameOf(i));
    needles.sort();
    const r = await get(server, '/pdns/v2/regex/rrnames/%5B0-9%5D%7B40%2C%7D', { 'X-API-Key': key });
    expect(r.status).toBe(200);
    expect(answer(r)).toBe(body(begin, ...needles.map((n) => ({ obj: { rrname: n, rrtype: 'A' } })), ok));
  }, 60_000);
});
