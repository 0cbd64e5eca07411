// Metrics and health (issue 16), over HTTP against real server processes:
// `serve --metrics-port` serves /metrics, /healthz and /readyz on a
// listener of its own, and the public port answers those paths with its 404.
// Each test makes real requests and asserts the exact change of the counters
// they move in the scraped text (requests by family and status, stream
// bytes, results, keep-alives, latency histogram counts, quota refusals by
// kind, overload causes, turns), and that the shard gauges say what the
// data directory holds. The standing watches' series read 0 until a watch
// opens, then count it, its pattern and what a published shard brought it,
// and go back to 0 open when its client hangs up. /readyz says 503 with its reason when there are no
// shards or the Redis key store is down (a private redis-server; skipped,
// saying so, when it is not installed). With --processes 2 the supervisor's
// one listener adds up both members' metrics and is ready only when both are.
//
// Slow scans come from a pattern RE2 runs on its NFA over 100,000 generated
// names (robustness.test.ts explains the pattern); a stalled reader is a raw
// socket that never reads a 10 MB answer (stalledGet).

import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type net from 'node:net';
import { FLEX_FIXTURE, T2015, T2018, T2020, T2023 } from '../fixtures/flex-dataset.js';
import { HAVE_REDIS, REDIS_SKIP_REASON, startRedis, type RedisServer } from '../helpers/redis-server.js';
import {
  addKey, cli, get, ingestNdjson, lines, memberPids, objects, randomNames, requestsByMember, stalledGet, startServer, streamGet, tempPaths,
  type Reply, type Server,
} from '../helpers/rrscan.js';
import { WatchClient } from '../helpers/watch-client.js';

if (!HAVE_REDIS) console.warn(`metrics.test.ts (readiness with Redis down): ${REDIS_SKIP_REASON}`);

const NOT_FOUND_PAGE = '<html><head><title>404 Not Found</title></head><body><h1>Not Found</h1></body></html>\n';
const OVERLOADED = 'Error: Server is overloaded, try again later\n';
const TEXT = 'text/plain; charset=utf-8';
const PROMETHEUS_TEXT = 'text/plain; version=0.0.4; charset=utf-8';

/** 1,000 TXT RRsets of about 10 KB: a 10 MB answer that a client that does not read keeps in flight. */
const BIG = Array.from({ length: 1000 }, (_, i) => ({
  count: 1, time_first: T2018, time_last: T2020, rrname: `n${i}.big.example.`, rrtype: 'TXT', bailiwick: 'big.example.',
  rdata: [Array(40).fill(`"${'x'.repeat(250)}"`).join(' ')],
}));
const BIG_PATH = '/pdns/v2/lookup/rrset/name/*.big.example';
/**
 * 520 small RRsets: a lookup of them writes LIMITS.pageGroupsPerTurn (512)
 * results, then takes exactly one turn, all in one 64 KB chunk (checked),
 * so that no backpressure can stand in for the turn.
 */
const TURNING = Array.from({ length: 520 }, (_, i) => ({
  count: 1, time_first: 1, time_last: 2, rrname: `n${i}.t.`, rrtype: 'A', bailiwick: 't.', rdata: [`10.0.${i >> 8}.${i & 255}`],
}));
const TURNING_PATH = '/pdns/v2/lookup/rrset/name/*.t';
/** RE2 falls back to its NFA on this one; no generated name has a `_`, so it matches nothing, slowly. */
const SLOW = '/pdns/v2/regex/rrnames/' + encodeURIComponent('(?:[a-f][^.]{20}|[0-9][^.]{20})[^.]{10}_');
const SLOW_NAMES = randomNames(100_000, 'slow.example.', 20_261_125).map((rrname, i) => ({
  count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000, rrname, rrtype: 'A', bailiwick: 'slow.example.',
  rdata: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`],
}));
const LOOKUP = '/pdns/v2/lookup/rrset/name/paypal.com';
const SUMMARIZE = '/pdns/v2/summarize/rrset/name/paypal.com';
const FLEX = '/pdns/v2/regex/rrnames/paypal';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

// --- Scraping ---------------------------------------------------------------

type Scrape = Map<string, number>;

/** A series' key as prom-client prints it: name{label="value",...} in the labels' order. */
function series(name: string, labels: Record<string, string> = {}): string {
  const l = Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',');
  return l === '' ? name : `${name}{${l}}`;
}

function parse(text: string): Scrape {
  const out: Scrape = new Map();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

async function scrape(server: Server): Promise<Scrape> {
  const r = await get({ port: server.metricsPort! }, '/metrics');
  expect(r.status).toBe(200);
  return parse(r.body);
}

/** A series' value; a series the scrape does not have is a mistake in the test or a metric gone missing. */
function value(s: Scrape, name: string, labels: Record<string, string> = {}): number {
  const k = series(name, labels);
  const v = s.get(k);
  if (v === undefined) throw new Error(`no series ${k} in the scrape`);
  return v;
}

const delta = (a: Scrape, b: Scrape, name: string, labels: Record<string, string> = {}): number =>
  value(b, name, labels) - value(a, name, labels);

/** Every series of `name` whose value changed between two scrapes, as {labels text: change}. */
function changes(a: Scrape, b: Scrape, name: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of b) {
    if (!k.startsWith(`${name}{`)) continue;
    const d = v - (a.get(k) ?? 0);
    if (d !== 0) out[k.slice(name.length)] = d;
  }
  return out;
}

/** Scrapes until `ok` holds (counters the server updates when it sees a hang-up), or fails after `ms`. */
async function scrapeUntil(server: Server, ok: (s: Scrape) => boolean, ms: number, what: string): Promise<Scrape> {
  const end = Date.now() + ms;
  for (;;) {
    const s = await scrape(server);
    if (ok(s)) return s;
    if (Date.now() > end) throw new Error(`after ${ms} ms still not: ${what}`);
    await sleep(50);
  }
}

const idlePool = (server: Server) => scrapeUntil(server, (s) => value(s, 'rrscan_scan_tasks', { state: 'running' }) === 0, 5_000,
  'the scan pool idle');

const bytes = (...replies: Reply[]): number => replies.reduce((n, r) => n + Buffer.byteLength(r.body), 0);
const keepAlives = (...replies: Reply[]): number =>
  replies.reduce((n, r) => n + lines(r.body).filter((l) => JSON.stringify(l) === '{}').length, 0);

// --- Fixture ----------------------------------------------------------------

const paths = tempPaths();
let dir: string;
let server: Server;
let H: Record<string, string>;
/**
 * A server of its own with a client that never reads a 10 MB answer, set up
 * first: uWS takes 8 to 12 s to end that stream, and the other tests run
 * meanwhile (the last one checks what was counted).
 */
let stalled: { server: Server; sock: net.Socket; before: Scrape } | undefined;

beforeAll(async () => {
  dir = paths.fresh();
  ingestNdjson(dir, [...FLEX_FIXTURE, ...BIG, ...TURNING, ...SLOW_NAMES]);
  H = { 'X-API-Key': addKey(dir) };
  const own = await startServer(dir, ['--metrics-port', '0']);
  const before = await scrape(own);
  stalled = { server: own, before, sock: await stalledGet(own.port, BIG_PATH, H['X-API-Key']!) };
  // One worker and no queue: a second flex search while one scans is refused (503); 20 ms scan turns; 50 ms keep-alives.
  server = await startServer(dir, ['--metrics-port', '0', '--workers', '1', '--queue-max', '0', '--scan-turn-ms', '20',
    '--keepalive-ms', '50']);
});

afterAll(async () => {
  stalled?.sock.destroy();
  await Promise.all([server?.close(), stalled?.server.close()]);
  paths.removeAll();
});

describe('the metrics listener', () => {
  it('is a port of its own on loopback, announced by serve; the public port answers its paths with the 404 page', async () => {
    expect(server.metricsPort).toBeGreaterThan(0);
    expect(server.metricsPort).not.toBe(server.port);
    for (const p of ['/metrics', '/healthz', '/readyz']) {
      const r = await get(server, p);
      expect([r.status, r.headers['content-type'], r.body], p).toEqual([404, 'text/html; charset=utf-8', NOT_FOUND_PAGE]);
    }
    const m = await get({ port: server.metricsPort! }, '/metrics');
    expect([m.status, m.headers['content-type']]).toEqual([200, PROMETHEUS_TEXT]);
    expect(m.body).toContain('# TYPE rrscan_http_requests_total counter\n');
    expect(m.body).toContain('# TYPE rrscan_http_first_byte_seconds histogram\n');
    expect(m.body).toContain('# TYPE process_cpu_user_seconds_total counter\n');
    const other = await get({ port: server.metricsPort! }, '/pdns/v2/ping');
    expect([other.status, other.headers['content-type'], other.body]).toEqual([404, TEXT, 'not found\n']);
  });

  it('answers /healthz and /readyz', async () => {
    const health = await get({ port: server.metricsPort! }, '/healthz');
    expect([health.status, health.headers['content-type'], health.body]).toEqual([200, TEXT, 'ok\n']);
    const ready = await get({ port: server.metricsPort! }, '/readyz');
    expect([ready.status, ready.headers['content-type'], ready.body]).toEqual([200, TEXT, 'ready\n']);
  });

  it('is off without --metrics-port; --metrics-port is checked', async () => {
    const plain = await startServer(dir);
    try {
      expect(plain.metricsPort).toBeUndefined();
    } finally {
      await plain.close();
    }
    const bad = cli(['serve', '--data', dir, '--port', '0', '--metrics-port', '70000']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--metrics-port must be an integer from 0 to 65535');
  });

  it('/readyz is 503 with its reason when no shards are mapped', async () => {
    const empty = await startServer(paths.fresh(), ['--metrics-port', '0']);
    try {
      const r = await get({ port: empty.metricsPort! }, '/readyz');
      expect([r.status, r.headers['content-type'], r.body]).toEqual([503, TEXT, 'not ready: no shards mapped\n']);
      expect((await get({ port: empty.metricsPort! }, '/healthz')).body).toBe('ok\n');
      const s = await scrape(empty);
      expect([value(s, 'rrscan_shards'), value(s, 'rrscan_data_newest_observation_timestamp_seconds')]).toEqual([0, 0]);
    } finally {
      await empty.close();
    }
  });
});

describe('requests and streams', () => {
  it('counts every answer by family and status, with exact stream bytes, results, keep-alives and latency counts', async () => {
    await idlePool(server);
    const before = await scrape(server);
    const lookup = await get(server, LOOKUP, H);
    const summary = await get(server, SUMMARIZE, H);
    const flex = await get(server, FLEX, H);
    const answers = [
      lookup, summary, flex,
      await get(server, '/pdns/v2/ping'),
      await get(server, '/pdns/v2/rate_limit', H),
      await get(server, LOOKUP, { 'X-API-Key': 'not-a-key' }),
      await get(server, FLEX),
      await get(server, '/pdns/v2/lookup/rrset/name/paypal.com/NOPE', H),
      await get(server, '/pdns/v2/nothing-here'),
      await get(server, '/pdns/v2/ping', {}, 'POST'),
      await get(server, '/metrics'),
    ];
    const after = await scrape(server);
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200, 403, 403, 400, 404, 404, 404]);
    expect(objects(summary.body)).toHaveLength(1);
    expect(changes(before, after, 'rrscan_http_requests_total')).toEqual({
      '{family="lookup",code="200"}': 2, '{family="lookup",code="403"}': 1, '{family="lookup",code="400"}': 1,
      '{family="flex",code="200"}': 1, '{family="flex",code="403"}': 1,
      '{family="ping",code="200"}': 1, '{family="rate_limit",code="200"}': 1, '{family="other",code="404"}': 3,
    });
    const counts = (name: string) => Object.fromEntries(
      ['flex', 'lookup', 'rate_limit', 'ping', 'other'].map((family) => [family, delta(before, after, `${name}_count`, { family })]));
    expect(counts('rrscan_http_first_byte_seconds')).toEqual({ flex: 2, lookup: 4, rate_limit: 1, ping: 1, other: 3 });
    expect(changes(before, after, 'rrscan_stream_terminator_seconds_count')).toEqual({
      '{family="lookup",terminator="succeeded"}': 2, '{family="flex",terminator="succeeded"}': 1,
    });
    expect(changes(before, after, 'rrscan_stream_bytes_total')).toEqual({
      '{family="lookup"}': bytes(lookup, summary), '{family="flex"}': bytes(flex),
    });
    // Results as `limit` counts them: a flexible search's name is one, however many rrtype lines it has; a summary is one.
    expect(changes(before, after, 'rrscan_stream_results_total')).toEqual({
      '{family="lookup"}': objects(lookup.body).length + 1, '{family="flex"}': new Set(objects(flex.body).map((o) => o['rrname'])).size,
    });
    const ka = { lookup: keepAlives(lookup, summary), flex: keepAlives(flex) };
    expect([delta(before, after, 'rrscan_stream_keepalives_total', { family: 'lookup' }),
      delta(before, after, 'rrscan_stream_keepalives_total', { family: 'flex' })]).toEqual([ka.lookup, ka.flex]);
    expect(changes(before, after, 'rrscan_http_requests_abandoned_total')).toEqual({});
    // The histogram's buckets are cumulative and end in the count.
    const le = (bound: string) => value(after, 'rrscan_http_first_byte_seconds_bucket', { family: 'lookup', le: bound });
    expect(le('0.0005')).toBeLessThanOrEqual(le('120'));
    expect(le('+Inf')).toBe(value(after, 'rrscan_http_first_byte_seconds_count', { family: 'lookup' }));
  });

  it('counts stream bytes as they go out when a failed terminator quotes non-ASCII text', async () => {
    await idlePool(server);
    const before = await scrape(server);
    const r = await get(server, `/pdns/v2/regex/rrnames/${encodeURIComponent('é(x')}`, H);
    const after = await scrape(server);
    const last = lines(r.body).at(-1) as { cond: string; msg: string };
    expect([r.status, last.cond]).toEqual([200, 'failed']);
    expect(last.msg).toContain('é');
    expect(changes(before, after, 'rrscan_stream_bytes_total')).toEqual({ '{family="flex"}': Buffer.byteLength(r.body) });
    expect(changes(before, after, 'rrscan_stream_terminator_seconds_count')).toEqual({ '{family="flex",terminator="failed"}': 1 });
  });

  it('counts the keep-alives of a long scan, its turns and the worker time it took', async () => {
    await idlePool(server);
    const before = await scrape(server);
    const t0 = performance.now();
    const slow = await get(server, SLOW, H);
    const wallSeconds = (performance.now() - t0) / 1000;
    const after = await scrape(server);
    expect(slow.status).toBe(200);
    expect(lines(slow.body).at(-1)).toEqual({ cond: 'succeeded', msg: 'Query completed, no results found' });
    const ka = keepAlives(slow);
    expect(ka, `the slow scan took ${wallSeconds} s: too short for a keep-alive, the fixture is too small for this machine`)
      .toBeGreaterThan(0);
    expect(delta(before, after, 'rrscan_stream_keepalives_total', { family: 'flex' })).toBe(ka);
    // Each turn given up starts the rest of the scan as a new task: one part, plus one task per turn.
    const turns = delta(before, after, 'rrscan_scan_turns_total');
    expect(turns).toBeGreaterThan(0);
    expect(delta(before, after, 'rrscan_scan_tasks_started_total')).toBe(1 + turns);
    const busy = delta(before, after, 'rrscan_scan_worker_busy_seconds_total');
    expect(busy).toBeGreaterThan(wallSeconds / 2);
    expect(busy).toBeLessThanOrEqual(wallSeconds);
    expect(changes(before, after, 'rrscan_stream_terminator_seconds_count')).toEqual({ '{family="flex",terminator="succeeded"}': 1 });
  });

  it('counts the turns a long lookup gives the front-end thread', async () => {
    const before = await scrape(server);
    const r = await get(server, TURNING_PATH, H);
    const after = await scrape(server);
    expect(objects(r.body)).toHaveLength(TURNING.length);
    if (Buffer.byteLength(r.body) >= 65_536) throw new Error('the TURNING answer outgrew one write chunk: shorten its lines');
    expect(delta(before, after, 'rrscan_frontend_turns_total')).toBe(1);
  });

  it('counts a 503 for a full scan queue by its cause, the running task, and the hang-up of the stream it waited on', async () => {
    await idlePool(server);
    const before = await scrape(server);
    const running = streamGet(server, SLOW, H);
    await running.firstChunk;
    const during = await scrape(server);
    const refused = await get(server, FLEX, H);
    const stillRunning = !running.ended();
    running.abort();
    expect(stillRunning, 'the slow scan ended before the refusal: the fixture is too small for this machine').toBe(true);
    expect([refused.status, refused.body]).toEqual([503, OVERLOADED]);
    expect([value(during, 'rrscan_scan_tasks', { state: 'running' }), value(during, 'rrscan_scan_tasks', { state: 'queued' })])
      .toEqual([1, 0]);
    expect(value(during, 'rrscan_streams_open')).toBe(1);
    const after = await scrapeUntil(server, (s) => delta(before, s, 'rrscan_stream_client_hangups_total', { family: 'flex' }) === 1,
      5_000, 'the hang-up counted');
    expect(changes(before, after, 'rrscan_overload_refusals_total')).toEqual({ '{cause="scan_queue"}': 1 });
    expect(changes(before, after, 'rrscan_http_requests_total'))
      .toEqual({ '{family="flex",code="200"}': 1, '{family="flex",code="503"}': 1 });
    expect(changes(before, after, 'rrscan_stream_terminator_seconds_count')).toEqual({});
    expect(value(after, 'rrscan_streams_open')).toBe(0);
  });
});

describe('refusals by the key\'s own limits', () => {
  it('counts 429s by quota kind, the concurrency cap\'s 503 and the expired licence\'s 401', async () => {
    const keys = {
      daily: addKey(dir, ['--daily', '1']), hourly: addKey(dir, ['--hourly', '1']), block: addKey(dir, ['--block', '1']),
      burst: addKey(dir, ['--unlimited', '--burst', '1', '--burst-window', '3600']),
      expired: addKey(dir, ['--block', '10', '--expires', '1000000000']), single: addKey(dir, ['--unlimited', '--max-concurrent', '1']),
    };
    const before = await scrape(server);
    const statuses: number[] = [];
    for (const k of [keys.daily, keys.hourly, keys.block, keys.burst]) {
      for (let i = 0; i < 2; i++) statuses.push((await get(server, LOOKUP, { 'X-API-Key': k })).status);
    }
    statuses.push((await get(server, LOOKUP, { 'X-API-Key': keys.expired })).status);
    let held: net.Socket | undefined = await stalledGet(server.port, BIG_PATH, keys.single);
    try {
      statuses.push((await get(server, LOOKUP, { 'X-API-Key': keys.single })).status);
    } finally {
      held.destroy();
      held = undefined;
    }
    expect(statuses).toEqual([200, 429, 200, 429, 200, 429, 200, 429, 401, 503]);
    const after = await scrapeUntil(server, (s) => delta(before, s, 'rrscan_stream_client_hangups_total', { family: 'lookup' }) === 1,
      5_000, 'the stalled lookup\'s hang-up counted');
    expect(changes(before, after, 'rrscan_quota_refusals_total')).toEqual({
      '{kind="daily"}': 1, '{kind="hourly"}': 1, '{kind="block"}': 1, '{kind="burst"}': 1, '{kind="expired"}': 1,
      '{kind="concurrency"}': 1,
    });
    expect(changes(before, after, 'rrscan_http_requests_total')).toEqual({
      '{family="lookup",code="200"}': 5, '{family="lookup",code="429"}': 4, '{family="lookup",code="401"}': 1,
      '{family="lookup",code="503"}': 1,
    });
    expect(changes(before, after, 'rrscan_overload_refusals_total')).toEqual({});
  });
});

describe('shards', () => {
  const manifest = () => JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as
    { generation: number; shards: { file: string }[] };
  const fileBytes = () => manifest().shards.reduce((n, s) => n + statSync(path.join(dir, s.file)).size, 0);

  it('reports the shards served, their generation, the bytes mapped and the newest data; and follows a reload', async () => {
    const before = await scrape(server);
    const m = manifest();
    expect([value(before, 'rrscan_shards'), value(before, 'rrscan_shard_generation'), value(before, 'rrscan_shard_mapped_bytes')])
      .toEqual([m.shards.length, m.generation, fileBytes()]);
    expect(value(before, 'rrscan_data_newest_observation_timestamp_seconds')).toBe(T2023);
    const age = value(before, 'rrscan_data_newest_observation_age_seconds');
    expect(Math.abs(age - (Date.now() / 1000 - T2023))).toBeLessThan(60);

    const newer = T2023 + 86_400;
    ingestNdjson(dir, [{ count: 1, time_first: T2015, time_last: newer, rrname: 'fresh.example.', rrtype: 'A', bailiwick: 'example.',
      rdata: ['192.0.2.99'] }], 'fresh.ndjson');
    const after = await scrapeUntil(server, (s) => value(s, 'rrscan_shard_generation') === m.generation + 1, 10_000, 'the reload seen');
    expect([value(after, 'rrscan_shards'), value(after, 'rrscan_shard_mapped_bytes')]).toEqual([m.shards.length + 1, fileBytes()]);
    expect(value(after, 'rrscan_data_newest_observation_timestamp_seconds')).toBe(newer);
    expect([delta(before, after, 'rrscan_shard_reloads_total'), delta(before, after, 'rrscan_shard_reload_failures_total')])
      .toEqual([1, 0]);
  });
});

describe('standing watches', () => {
  const WATCH = '/pdns/v2/watch/regex/rrnames/watched-metrics';

  /** The watch series of a scrape, as the lines /metrics prints, matcher and front-end times aside. */
  const watchLines = (sc: Scrape): string[] => [...sc].filter(([k]) => /^rrscan_watch(es|_)/.test(k) && !/_seconds/.test(k))
    .map(([k, v]) => `${k} ${v}`);
  const seconds = (sc: Scrape) => ['match_seconds_total', 'frontend_busy_seconds_total', 'longest_slice_seconds']
    .map((n) => value(sc, `rrscan_watch_${n}`));

  it('read 0 before the first watch opens; count it, its pattern and what a published shard brought it; 0 open once it is gone',
    async () => {
      const before = await scrape(server);
      const zero = [
        'rrscan_watches_open 0', 'rrscan_watch_patterns{target="rrnames"} 0', 'rrscan_watch_patterns{target="rdata"} 0',
        'rrscan_watch_snapshots_matched_total 0', 'rrscan_watch_shards_matched_total 0', 'rrscan_watch_records_matched_total 0',
        'rrscan_watch_tuples_total 0',
      ];
      expect(watchLines(before)).toEqual(zero);
      expect(seconds(before)).toEqual([0, 0, 0]);

      const w = new WatchClient(server.port, WATCH, H['X-API-Key']!);
      expect(await w.response).toBe(200);
      await w.begun();
      // A watch that begins while the local feed matches a snapshot is attached (and counted) right after that match.
      const open = await scrapeUntil(server, (sc) => value(sc, 'rrscan_watches_open') === 1, 5_000, 'the watch attached');
      expect(watchLines(open)).toEqual(['rrscan_watches_open 1', 'rrscan_watch_patterns{target="rrnames"} 1', ...zero.slice(2)]);

      // One new matching name in one new shard: one snapshot, one shard, its one rrnames record, one tuple.
      const t = Math.floor(Date.now() / 1000);
      ingestNdjson(dir, [{ count: 1, time_first: t, time_last: t, rrname: 'new.watched-metrics.example.', rrtype: 'A',
        bailiwick: 'example.', rdata: ['192.0.2.7'] }], 'watched.ndjson');
      expect(await w.objectsAtLeast(1)).toEqual([{ rrname: 'new.watched-metrics.example.', rrtype: 'A', time_first: t }]);
      const matched = await scrape(server);
      expect(watchLines(matched)).toEqual([
        'rrscan_watches_open 1', 'rrscan_watch_patterns{target="rrnames"} 1', 'rrscan_watch_patterns{target="rdata"} 0',
        'rrscan_watch_snapshots_matched_total 1', 'rrscan_watch_shards_matched_total 1', 'rrscan_watch_records_matched_total 1',
        'rrscan_watch_tuples_total 1',
      ]);
      const [matchS, busyS, sliceS] = seconds(matched);
      expect(matchS).toBeGreaterThan(0);
      expect(sliceS).toBeGreaterThan(0);
      expect(busyS).toBeGreaterThanOrEqual(sliceS!);

      w.hangUp();
      await w.ended;
      const gone = await scrapeUntil(server, (sc) => value(sc, 'rrscan_watches_open') === 0, 5_000, 'the watch closed');
      expect(watchLines(gone)).toEqual([
        'rrscan_watches_open 0', 'rrscan_watch_patterns{target="rrnames"} 0', 'rrscan_watch_patterns{target="rdata"} 0',
        ...watchLines(matched).slice(3),
      ]);
    });
});

describe('a reader that stops reading', () => {
  it('is counted as cut by a slow reader once uWS ends its stream (10 s without progress)', async () => {
    const { server: own, before } = stalled!;
    const after = await scrapeUntil(own, (s) => delta(before, s, 'rrscan_stream_slow_reader_cuts_total', { family: 'lookup' }) > 0,
      20_000, 'the stalled stream cut');
    expect(changes(before, after, 'rrscan_stream_slow_reader_cuts_total')).toEqual({ '{family="lookup"}': 1 });
    expect(changes(before, after, 'rrscan_stream_client_hangups_total')).toEqual({});
    expect(changes(before, after, 'rrscan_stream_terminator_seconds_count')).toEqual({});
    expect(changes(before, after, 'rrscan_http_requests_total')).toEqual({ '{family="lookup",code="200"}': 1 });
  });
});

describe.skipIf(!HAVE_REDIS)('readiness with the Redis key store', () => {
  let redis: RedisServer;
  let front: Server;
  let key: string;

  beforeAll(async () => {
    redis = await startRedis();
    front = await startServer(dir, ['--redis-url', redis.url, '--metrics-port', '0']);
    key = addKey(dir, ['--redis-url', redis.url, '--daily', '100']);
  });

  afterAll(async () => {
    await front?.close();
    await redis?.close();
  });

  it('is 503 "key store unreachable" while Redis is down, and ready again when it is back', async () => {
    const readyz = () => get({ port: front.metricsPort! }, '/readyz');
    expect([(await readyz()).status, (await readyz()).body]).toEqual([200, 'ready\n']);
    const before = await scrape(front);
    await redis.stop();
    try {
      const r = await readyz();
      expect([r.status, r.headers['content-type'], r.body]).toEqual([503, TEXT, 'not ready: key store unreachable\n']);
      const refused = await get(front, LOOKUP, { 'X-API-Key': key });
      expect([refused.status, refused.body]).toEqual([503, OVERLOADED]);
      expect((await get({ port: front.metricsPort! }, '/healthz')).body).toBe('ok\n');
    } finally {
      await redis.start();
    }
    const after = await scrape(front);
    expect(changes(before, after, 'rrscan_overload_refusals_total')).toEqual({ '{cause="key_store"}': 1 });
    const end = Date.now() + 5_000;
    let back = await readyz();
    while (back.status !== 200 && Date.now() < end) {
      await sleep(50);
      back = await readyz();
    }
    expect([back.status, back.body]).toEqual([200, 'ready\n']);
  });
});

describe('serve --processes 2 --metrics-port: one listener for the group', () => {
  const dirs = tempPaths();
  let group: Server;
  let key: string;
  const readyz = () => get({ port: group.metricsPort! }, '/readyz');

  beforeAll(async () => {
    const dir = dirs.fresh();
    ingestNdjson(dir, FLEX_FIXTURE);
    key = addKey(dir);
    group = await startServer(dir, ['--processes', '2', '--workers', '1', '--metrics-port', '0'], { RRSCAN_LOG_LEVEL: 'info' });
  });

  afterAll(async () => {
    await group?.close();
    dirs.removeAll();
  });

  it('adds up both members\' counters exactly; gauges of the shared data are not doubled', async () => {
    const before = await scrape(group);
    const served = [...requestsByMember(group).values()].reduce((a, b) => a + b, 0);
    const replies = await Promise.all(Array.from({ length: 200 }, () => get(group, LOOKUP, { 'X-API-Key': key })));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    // The request log is written asynchronously: wait for all 200 lines.
    const logged = () => [...requestsByMember(group).values()].reduce((a, b) => a + b, 0) - served;
    for (const end = Date.now() + 5_000; logged() < 200 && Date.now() < end;) await sleep(25);
    const byMember = requestsByMember(group);
    expect(byMember.get(0), 'member 0 answered none').toBeGreaterThan(0);
    expect(byMember.get(1), 'member 1 answered none').toBeGreaterThan(0);
    const after = await scrape(group);
    expect(delta(before, after, 'rrscan_http_requests_total', { family: 'lookup', code: '200' })).toBe(200);
    expect(delta(before, after, 'rrscan_http_first_byte_seconds_count', { family: 'lookup' })).toBe(200);
    expect(value(after, 'rrscan_shards')).toBe(1);
    expect(value(after, 'rrscan_scan_workers')).toBe(2);
    expect(value(after, 'rrscan_group_members_running')).toBe(2);
    expect([(await readyz()).status, (await readyz()).body]).toEqual([200, 'ready\n']);
  });

  it('a dead member makes the group not ready until it is back; the restart is counted', async () => {
    const pid = memberPids(group).get(0)!;
    process.kill(pid, 'SIGKILL');
    let r = await readyz();
    const end = Date.now() + 5_000;
    while (r.status === 200 && Date.now() < end) r = await readyz();
    expect([r.status, r.headers['content-type'], r.body]).toEqual([503, TEXT, 'not ready: member 0 is not running\n']);
    expect((await get({ port: group.metricsPort! }, '/healthz')).body).toBe('ok\n');
    const back = Date.now() + 15_000;
    while (r.status !== 200 && Date.now() < back) {
      await sleep(50);
      r = await readyz();
    }
    expect([r.status, r.body]).toEqual([200, 'ready\n']);
    const s = await scrape(group);
    expect(value(s, 'rrscan_group_member_restarts_total')).toBe(1);
    expect(value(s, 'rrscan_group_members_running')).toBe(2);
  }, 30_000);
});
