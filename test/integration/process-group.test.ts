// serve --processes N (issue 13): N front-end processes on one port through
// SO_REUSEPORT, sharing quotas exactly (the SQLite file, or Redis across
// groups), each member restarted when it dies, new shards reaching all of
// them, SIGTERM ending every member's open streams with their terminator,
// and no member outliving its supervisor. Real processes throughout.

import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEX_FIXTURE, T2018, T2020 } from '../fixtures/flex-dataset.js';
import { HAVE_REDIS, REDIS_SKIP_REASON, startRedis, type RedisServer } from '../helpers/redis-server.js';
import {
  addKey, begin, BIN, get, ingestNdjson, lines, memberPids, randomNames, removeDir, requestsByMember, startServer, streamGet, tempDir,
  type Server,
} from '../helpers/rrscan.js';

if (!HAVE_REDIS) console.warn(`process-group.test.ts: the Redis cases skip: ${REDIS_SKIP_REASON}`);

const LOOKUP = '/pdns/v2/lookup/rrset/name/paypal.com';
const RATE_LIMITED = 'Error: Rate limit exceeded\n';
const SHUTDOWN = { cond: 'failed', msg: 'Server is shutting down' };
// A scan of the random names that takes long enough to be in flight when
// the group is told to stop (robustness.test.ts measures the same kind).
const SLOW = '/pdns/v2/regex/rrnames/' + encodeURIComponent('(?:[a-f][^.]{20}|[0-9][^.]{20})[^.]{10}_');
const QUOTA = 500;
const BURST = 1_000;
const RUNS = 10;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

const record = (rrname: string) => ({
  count: 1, time_first: T2018, time_last: T2020, rrname, rrtype: 'A', bailiwick: 'robust.example.', rdata: ['192.0.2.1'],
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Runs `step` until `done()` holds; fails after `deadlineMs`. */
async function until(what: string, done: () => boolean, deadlineMs: number, step: () => Promise<unknown> = () => sleep(25)): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!done()) {
    if (Date.now() > end) throw new Error(`timed out waiting until ${what}`);
    await step();
  }
}

/** `n` requests at once, each on its own connection, spread round-robin over `servers`; counts the replies by status and body. */
async function burst(servers: readonly Server[], n: number, key: string): Promise<Map<string, number>> {
  const replies = await Promise.all(Array.from({ length: n }, (_, i) => get(servers[i % servers.length]!, LOOKUP, { 'X-API-Key': key })));
  const counts = new Map<string, number>();
  for (const r of replies) {
    const what = r.status === 200 ? '200' : `${r.status} ${r.body}`;
    counts.set(what, (counts.get(what) ?? 0) + 1);
  }
  return counts;
}

const exact = new Map([['200', QUOTA], [`429 ${RATE_LIMITED}`, BURST - QUOTA]]);

describe('serve --processes 2', () => {
  let dir: string;
  let group: Server;

  beforeAll(async () => {
    dir = tempDir();
    ingestNdjson(dir, [...FLEX_FIXTURE, ...randomNames(50_000, 'robust.example.', 20_261_125).map(record)]);
    group = await startServer(dir, ['--processes', '2', '--keepalive-ms', '50'], { RRSCAN_LOG_LEVEL: 'info' });
  });

  afterAll(async () => {
    await group?.close();
    removeDir(dir);
  });

  it('prints one URL; both members listen on its port and answer alike', async () => {
    expect(group.proc.exitCode).toBe(null);
    expect([...memberPids(group).keys()].sort()).toEqual([0, 1]);
    const key = addKey(dir);
    const replies = await Promise.all(Array.from({ length: 200 }, () => get(group, LOOKUP, { 'X-API-Key': key })));
    expect(new Set(replies.map((r) => `${r.status} ${r.body}`)).size).toBe(1);
    expect(replies[0]!.status).toBe(200);
    await until('the request log has every request', () => [...requestsByMember(group).values()].reduce((a, b) => a + b, 0) >= 200,
      5_000);
    const byMember = requestsByMember(group);
    expect(byMember.get(0), 'member 0 answered none: SO_REUSEPORT did not spread the connections').toBeGreaterThan(0);
    expect(byMember.get(1), 'member 1 answered none: SO_REUSEPORT did not spread the connections').toBeGreaterThan(0);
  });

  it(`a daily quota of ${QUOTA} holds exactly over both members: ${BURST} requests at once, ${RUNS} runs out of ${RUNS}`, async () => {
    for (let run = 0; run < RUNS; run++) {
      const key = addKey(dir, ['--daily', String(QUOTA)]);
      expect(await burst([group], BURST, key), `run ${run + 1}`).toEqual(exact);
    }
  }, 120_000);

  it('new shards reach every member', async () => {
    const key = addKey(dir);
    ingestNdjson(dir, [record('fresh.robust.example.')], 'fresh.ndjson');
    const path = '/pdns/v2/lookup/rrset/name/fresh.robust.example';
    // Forty answers in a row on new connections: both members have reloaded.
    let streak = 0;
    await until('forty answers in a row have the new record', () => streak >= 40, 10_000, async () => {
      const r = await get(group, path, { 'X-API-Key': key });
      streak = r.status === 200 && r.body.includes('fresh.robust.example.') ? streak + 1 : 0;
    });
  });

  it('a member killed with -9 is started again, and the other serves meanwhile', async () => {
    const key = addKey(dir);
    const before = memberPids(group);
    process.kill(before.get(0)!, 'SIGKILL');
    await until('member 0 has exited', () => !alive(before.get(0)!), 5_000);
    const during = await Promise.all(Array.from({ length: 50 }, () => get(group, LOOKUP, { 'X-API-Key': key })));
    expect(during.map((r) => r.status)).toEqual(Array(50).fill(200));
    await until('member 0 is back', () => memberPids(group).get(0) !== before.get(0), 10_000);
    expect(memberPids(group).get(1)).toBe(before.get(1));
    const served = requestsByMember(group).get(0) ?? 0;
    await until('member 0 answers again', () => (requestsByMember(group).get(0) ?? 0) > served, 15_000,
      () => get(group, LOOKUP, { 'X-API-Key': key }));
  }, 30_000);
});

describe('stopping a group', () => {
  let dir: string;

  beforeAll(() => {
    dir = tempDir();
    ingestNdjson(dir, randomNames(50_000, 'robust.example.', 20_261_125).map(record));
  });

  afterAll(() => removeDir(dir));

  it('SIGTERM ends the open streams of every member with the shutdown terminator, then exits 0', async () => {
    const group = await startServer(dir, ['--processes', '2', '--workers', '1', '--keepalive-ms', '50'], { RRSCAN_LOG_LEVEL: 'info' });
    try {
      const key = addKey(dir);
      const pids = [...memberPids(group).values()];
      // Sixteen connections: all on one member with probability 2^-15.
      const streams = Array.from({ length: 16 }, () => streamGet(group, SLOW, { 'X-API-Key': key }));
      await Promise.all(streams.map((s) => s.firstChunk));
      expect(streams.filter((s) => s.ended()), 'a slow scan ended too soon: the fixture is too small for this machine').toEqual([]);
      const exited = new Promise<number | null>((r) => group.proc.once('exit', (code) => r(code)));
      group.proc.kill('SIGTERM');
      for (const s of streams) {
        const r = await s.done;
        expect(lines(r.body).filter((l) => (l as { cond?: string }).cond !== undefined)).toEqual([begin, SHUTDOWN]);
      }
      expect(await exited).toBe(0);
      expect(pids.filter(alive)).toEqual([]);
      const byMember = requestsByMember(group);
      expect([byMember.get(0)! > 0, byMember.get(1)! > 0], 'every member had streams to end').toEqual([true, true]);
    } finally {
      await group.close();
    }
  }, 60_000);

  it('Ctrl-C (SIGINT to the whole process group) stops the group once: streams end with the terminator, no member restarts', async () => {
    const proc = spawn(process.execPath, [BIN, 'serve', '--data', dir, '--port', '0', '--processes', '2', '--workers', '1',
      '--keepalive-ms', '50'], { detached: true, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RRSCAN_LOG_LEVEL: 'info' } });
    let out = '';
    let err = '';
    proc.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    const exited = new Promise<number | null>((r) => proc.once('exit', (code) => r(code)));
    try {
      await until('the group listens', () => /at http:\/\/\S+\/pdns\/v2\//.test(out), 30_000);
      const port = Number(/127\.0\.0\.1:(\d+)\//.exec(out)![1]);
      const key = addKey(dir);
      const streams = Array.from({ length: 8 }, () => streamGet({ port }, SLOW, { 'X-API-Key': key }));
      await Promise.all(streams.map((s) => s.firstChunk));
      process.kill(-proc.pid!, 'SIGINT');
      for (const s of streams) {
        expect(lines((await s.done).body).filter((l) => (l as { cond?: string }).cond !== undefined)).toEqual([begin, SHUTDOWN]);
      }
      expect(await exited).toBe(0);
      expect(err).not.toContain('starting it again');
    } finally {
      if (proc.exitCode === null) process.kill(-proc.pid!, 'SIGKILL');
    }
  }, 60_000);

  it('a supervisor killed with -9 leaves no front end behind', async () => {
    const group = await startServer(dir, ['--processes', '2'], { RRSCAN_LOG_LEVEL: 'info' });
    const pids = [...memberPids(group).values()];
    expect(pids.length).toBe(2);
    group.proc.kill('SIGKILL');
    await until('both members have exited', () => pids.every((p) => !alive(p)), 10_000);
  });
});

describe.skipIf(!HAVE_REDIS)('two groups of two processes sharing one Redis', () => {
  let dir: string;
  let redis: RedisServer;
  let groups: Server[];

  beforeAll(async () => {
    dir = tempDir();
    ingestNdjson(dir, FLEX_FIXTURE);
    redis = await startRedis();
    groups = await Promise.all([0, 1].map(() => startServer(dir, ['--processes', '2', '--redis-url', redis.url],
      { RRSCAN_LOG_LEVEL: 'info' })));
  });

  afterAll(async () => {
    await Promise.all((groups ?? []).map((g) => g.close()));
    await redis?.close();
    removeDir(dir);
  });

  it(`a daily quota of ${QUOTA} holds exactly over four front ends: ${BURST} requests at once, ${RUNS} runs out of ${RUNS}`,
    async () => {
      for (let run = 0; run < RUNS; run++) {
        const key = addKey(dir, ['--redis-url', redis.url, '--daily', String(QUOTA)]);
        expect(await burst(groups, BURST, key), `run ${run + 1}`).toEqual(exact);
      }
      await until('the request log has every request', () => groups.every((g) => requestsByMember(g).size === 2), 5_000);
    }, 120_000);
});
