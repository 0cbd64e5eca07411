// Front ends sharing one Redis (issue 13): a key's --max-concurrent holds
// across them, a front end killed with requests in flight gives its slots
// back within the lease time to live, and while Redis is down data requests
// get 503 OVERLOADED (never served unmetered), service resumes by itself
// when Redis returns, and the charges committed before survive a SIGKILL of
// redis-server (appendfsync always). Real processes throughout.

import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { FLEX_FIXTURE, T2018, T2020 } from '../fixtures/flex-dataset.js';
import { HAVE_REDIS, REDIS_SKIP_REASON, startRedis, type RedisServer } from '../helpers/redis-server.js';
import { addKey, get, ingestNdjson, removeDir, stalledGet, startServer, tempDir, type Reply, type Server } from '../helpers/rrscan.js';

if (!HAVE_REDIS) console.warn(`redis-store.test.ts: ${REDIS_SKIP_REASON}`);

// 1,000 TXT RRsets of about 10 KB each: a 10 MB answer, far more than the
// socket buffers hold, so a client that does not read keeps its request in
// flight for as long as it likes.
const BIG = Array.from({ length: 1000 }, (_, i) => ({
  count: 1, time_first: T2018, time_last: T2020, rrname: `n${i}.big.example.`, rrtype: 'TXT', bailiwick: 'big.example.',
  rdata: [Array(40).fill(`"${'x'.repeat(250)}"`).join(' ')],
}));
const BIG_PATH = '/pdns/v2/lookup/rrset/name/*.big.example';
const LOOKUP = '/pdns/v2/lookup/rrset/name/paypal.com';
const FLEX = '/pdns/v2/regex/rrnames/paypal%5C.com%5C.$';
const OVERLOADED = 'Error: Server is overloaded, try again later\n';
const TOO_MANY = 'Error: Too many concurrent connections\n';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));


/** GETs until the status is not `while` or `deadlineMs` has passed; answers the last reply. */
async function getUntilNot(server: Server, p: string, key: string, whileStatus: number, deadlineMs: number): Promise<Reply> {
  const end = Date.now() + deadlineMs;
  let r = await get(server, p, { 'X-API-Key': key });
  while (r.status === whileStatus && Date.now() < end) {
    await sleep(50);
    r = await get(server, p, { 'X-API-Key': key });
  }
  return r;
}

describe.skipIf(!HAVE_REDIS)('front ends sharing one Redis', () => {
  let dir: string;
  let redis: RedisServer;
  let one: Server;
  let two: Server;

  beforeAll(async () => {
    dir = tempDir();
    ingestNdjson(dir, [...FLEX_FIXTURE, ...BIG]);
    redis = await startRedis();
    [one, two] = await Promise.all([startServer(dir, ['--redis-url', redis.url]), startServer(dir, ['--redis-url', redis.url])]);
  });

  afterAll(async () => {
    await Promise.all([one?.close(), two?.close()]);
    await redis?.close();
    removeDir(dir);
  });

  const key = (...flags: string[]): string => addKey(dir, ['--redis-url', redis.url, ...flags]);

  it('a key\'s --max-concurrent 4 holds across front ends: 4 streams, the 5th gets 503 on either; slots come back', async () => {
    const capped = key('--unlimited', '--max-concurrent', '4');
    const held = [
      await stalledGet(one.port, BIG_PATH, capped), await stalledGet(two.port, BIG_PATH, capped),
      await stalledGet(one.port, BIG_PATH, capped), await stalledGet(two.port, BIG_PATH, capped),
    ];
    try {
      for (const [server, p] of [[one, LOOKUP], [two, FLEX], [two, LOOKUP], [one, FLEX]] as const) {
        const r = await get(server, p, { 'X-API-Key': capped });
        expect([r.status, r.body], `${p} on ${server.port}`).toEqual([503, TOO_MANY]);
      }
      held.pop()!.destroy();
      const fifth = await getUntilNot(one, LOOKUP, capped, 503, 2_000);
      expect(fifth.status).toBe(200);
    } finally {
      for (const sock of held) sock.destroy();
    }
    const after = await getUntilNot(two, LOOKUP, capped, 503, 2_000);
    expect(after.status).toBe(200);
  });

  it('a front end killed with a request in flight gives its slot back within the lease time to live', async () => {
    const single = key('--unlimited', '--max-concurrent', '1');
    const doomed = await startServer(dir, ['--redis-url', redis.url]);
    const held = await stalledGet(doomed.port, BIG_PATH, single);
    const exited = new Promise((r) => doomed.proc.once('exit', r));
    doomed.proc.kill('SIGKILL');
    await exited;
    held.destroy();
    const killedAt = Date.now();
    expect((await get(two, LOOKUP, { 'X-API-Key': single })).body).toBe(TOO_MANY);
    const after = await getUntilNot(two, LOOKUP, single, 503, LIMITS.concurrencyLeaseTtlMs + 3_000);
    expect(after.status).toBe(200);
    expect(Date.now() - killedAt).toBeLessThan(LIMITS.concurrencyLeaseTtlMs + 1_000);
  });

  it('answers 503 OVERLOADED while Redis is down, recovers by itself, and keeps the charges made before', async () => {
    const daily = key('--daily', '5');
    const unlimited = key('--unlimited');
    for (const remaining of ['4', '3']) {
      const r = await get(one, LOOKUP, { 'X-API-Key': daily });
      expect([r.status, r.headers['x-ratelimit-remaining']]).toEqual([200, remaining]);
    }
    await redis.stop(true);
    try {
      // Past the licence cache: every front end must ask Redis about every key.
      await sleep(LIMITS.licenceCacheTtlMs + 100);
      for (const [server, p, k] of [[one, LOOKUP, daily], [two, FLEX, daily], [one, FLEX, unlimited], [two, LOOKUP, unlimited]] as const) {
        const r = await get(server, p, { 'X-API-Key': k });
        expect([r.status, r.body], `${p} on ${server.port}`).toEqual([503, OVERLOADED]);
      }
    } finally {
      await redis.start();
    }
    const back = await getUntilNot(one, LOOKUP, daily, 503, 5_000);
    // Two charges before the outage, none for the refusals during it, one now.
    expect([back.status, back.headers['x-ratelimit-remaining']]).toEqual([200, '2']);
    expect((await getUntilNot(two, FLEX, unlimited, 503, 5_000)).status).toBe(200);
    const rl = JSON.parse((await get(two, '/pdns/v2/rate_limit', { 'X-API-Key': daily })).body) as { rate: Record<string, unknown> };
    expect([rl.rate['limit'], rl.rate['remaining']]).toEqual([5, 2]);
  });
});
