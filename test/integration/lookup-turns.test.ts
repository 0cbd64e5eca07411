// A standard search takes turns on the front-end thread by work done, not
// by rows written: a wildcard whose rows a fence drops, or an offset skips,
// writes nothing for a long time, yet other requests are answered meanwhile
// and its own stream is kept alive. (The old pump yielded only after rows it
// wrote: such a lookup held the thread for its whole run.) And a standard
// search has a wall-time limit (serve --search-timeout-ms) that ends its
// stream with an in-stream `failed` (robustness.test.ts checks a flexible
// one, on data that keeps RE2 busy).

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addKey, cli, get, ingestNdjson, lines, removeDir, startServer, streamGet, tempDir, type Server } from '../helpers/rrscan.js';

const RRSETS = 200_000;
const KEEPALIVE_MS = 10;

let dir: string;
let server: Server;
let H: Record<string, string>;

beforeAll(async () => {
  dir = tempDir('rrscan-turns-');
  ingestNdjson(dir, Array.from({ length: RRSETS }, (_, i) => ({
    count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000, rrname: `h${i}.turns.example.`, rrtype: 'A',
    bailiwick: 'example.', rdata: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`],
  })));
  H = { 'X-API-Key': addKey(dir, ['--unlimited', '--offset-max', '1000000']) };
  server = await startServer(dir, ['--keepalive-ms', String(KEEPALIVE_MS)]);
});

afterAll(async () => {
  await server?.close();
  removeDir(dir);
});

describe('serve --search-timeout-ms', () => {
  let fast: Server;
  beforeAll(async () => {
    fast = await startServer(dir, ['--search-timeout-ms', '20']);
  });
  afterAll(async () => {
    await fast?.close();
  });

  const timedOut = { cond: 'failed', msg: 'Query timed out' };
  it('ends a lookup that runs longer with an in-stream failed, and goes on serving', async () => {
    const r = await get(fast, '/pdns/v2/lookup/rrset/name/*.turns.example/A?time_first_after=4000000000', H);
    expect(r.status).toBe(200);
    const got = lines(r.body);
    expect(got[0]).toEqual({ cond: 'begin' });
    expect(got[got.length - 1]).toEqual(timedOut);
    expect(got.slice(1, -1).every((l) => JSON.stringify(l) === '{}')).toBe(true);
    expect((await get(fast, '/pdns/v2/lookup/rrset/name/h7.turns.example/A', H)).body).toContain('"rrname":"h7.turns.example."');
  });

  it('refuses a value out of range before starting', () => {
    const r = cli(['serve', '--data', dir, '--search-timeout-ms', '5']);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain('--search-timeout-ms must be an integer from 10 to 3600000');
  });
});

describe('a lookup that writes nothing for a long time', () => {
  for (const [what, query] of [
    ['every row dropped by a fence', 'time_first_after=4000000000'],
    ['every row skipped by an offset', `offset=${RRSETS}`],
  ] as const) {
    it(`${what}: its stream stays alive and a ping is answered while it runs`, async () => {
      const s = streamGet(server, `/pdns/v2/lookup/rrset/name/*.turns.example/A?${query}`, H);
      await s.response;
      const pingAt = performance.now();
      const ping = await get(server, '/pdns/v2/ping');
      const pingMs = performance.now() - pingAt;
      const r = await s.done;
      expect(ping.body).toBe('{"ping":"ok"}\n');
      expect(lines(r.body)).toEqual([{ cond: 'begin' }, ...lines(r.body).slice(1, -1).map(() => ({})),
        { cond: 'succeeded', msg: 'Query completed, no results found' }]);
      const totalMs = r.chunks[r.chunks.length - 1]!.ms - r.sentMs;
      // The 200 and `begin` left at the first keep-alive tick, long before the end: the loop kept turning.
      expect(r.chunks.length, `one chunk in ${totalMs.toFixed(0)} ms`).toBeGreaterThanOrEqual(2);
      expect(pingMs, `ping took ${pingMs.toFixed(1)} ms of a ${totalMs.toFixed(0)} ms lookup`).toBeLessThan(totalMs);
    });
  }
});
