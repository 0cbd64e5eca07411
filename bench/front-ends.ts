// Several front ends (issue 13), in one run: exact-lookup throughput under
// wrk with the embedded key store and with Redis, for an unlimited and a
// daily-quota key; then `serve --processes 1` against `--processes 2`, with
// the CPU each process used and its memory (RSS, and PSS, which splits the
// shard pages that every member maps between them: the page cache holds them
// once).
//
//   npm run build && node dist/bench/front-ends.js [--data bench/out/flex-2000000] [--names 2000000] [--seconds 10]
//
// Needs wrk and redis-server (Debian packages wrk, redis-server); the Redis
// rows are skipped, saying so, without redis-server. Redis runs with an
// append-only file, fsynced every second and, as the README advises for
// charges that survive a crash of its machine, before every reply (always):
// a charge then waits for a disk flush, so one front end's throughput is
// bounded by its concurrent requests / the flush time (Little's law).
// Target: the Redis quota path (a daily key: one Lua charge per event-loop
// turn of requests) costs at most 15% of lookup throughput, i.e. a daily key
// on Redis reaches >= 85% of the embedded store's unlimited-key req/s. wrk
// shares the 2 cores with the server, so a second process can add little
// here; the CPU columns show where the time went.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { addKey } from '../src/auth/key-admin.js';
import { redisKeyStoreConfig, sqliteKeyStoreConfig, type KeyStoreConfig } from '../src/auth/stores/open-key-store.js';
import { readManifest } from '../src/shard/manifest.js';
import { OUT, arg, bareUws, cpuSeconds, environment, fmt, startServer, wrk, type BenchServer, type Load } from './common.js';
import { ensureFlexDataset } from './dataset.js';
import { freePort } from '../src/lib/free-port.js';

const dataDir = path.resolve(arg('data', path.join(OUT, 'flex-2000000')));
const names = Number(arg('names', '2000000'));
const seconds = Number(arg('seconds', '10'));
const WARM_SECONDS = 2;
const TARGET_COST = 0.15;

/** RSS and PSS in MiB, from /proc/PID/smaps_rollup. */
function memory(pid: number): { rss: number; pss: number } {
  const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(text)?.[1] ?? NaN);
  return { rss: kib('Rss') / 1024, pss: kib('Pss') / 1024 };
}

/** The server's processes: the one we started and, for a group, its members. */
function processesOf(server: BenchServer): number[] {
  const pid = server.proc.pid!;
  const children = spawnSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' }).stdout
    .split('\n').map((l) => Number(l.trim())).filter((n) => n > 0);
  return [pid, ...children];
}

interface Row {
  label: string;
  load: Load;
  /** CPU use per process during the measured run, in % of one core, with its role. */
  cpu: string;
  memory: string;
}

/** wrk on an exact lookup after a warm-up; CPU of every server process (and Redis) over the measured run. */
function measure(label: string, server: BenchServer, key: string, lookup: string, redis?: ChildProcess): Row {
  const url = `http://127.0.0.1:${server.port}${lookup}`;
  const headers = { 'X-API-Key': key };
  wrk(url, headers, WARM_SECONDS);
  const pids = processesOf(server);
  const watched = redis === undefined ? pids : [...pids, redis.pid!];
  const before = watched.map(cpuSeconds);
  const t0 = performance.now();
  const load = wrk(url, headers, seconds)!;
  const wall = (performance.now() - t0) / 1000;
  const used = watched.map((p, i) => (100 * (cpuSeconds(p) - before[i]!)) / wall);
  const role = (i: number) => (i >= pids.length ? 'redis' : pids.length === 1 ? 'server' : i === 0 ? 'supervisor' : `member ${i - 1}`);
  const mem = pids.map(memory);
  return {
    label, load,
    cpu: used.map((u, i) => `${role(i)} ${fmt(u, 0)}%`).join(', '),
    memory: mem.map((m, i) => `${role(i)} ${fmt(m.rss, 0)}/${fmt(m.pss, 0)}`).join(', ') +
      (pids.length > 1 ? `; total ${fmt(mem.reduce((a, m) => a + m.rss, 0), 0)}/${fmt(mem.reduce((a, m) => a + m.pss, 0), 0)}` : ''),
  };
}

type Fsync = 'always' | 'everysec';

/** A private redis-server in a scratch directory, AOF with `fsync`; undefined when it is not installed. */
async function startRedis(fsync: Fsync): Promise<{ url: string; proc: ChildProcess; stop(): void } | undefined> {
  if (spawnSync('redis-server', ['--version']).error) return undefined;
  const dir = mkdtempSync(path.join(OUT, 'redis-'));
  const port = await freePort();
  const proc = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '',
    '--appendonly', 'yes', '--appendfsync', fsync], { stdio: 'ignore' });
  for (let i = 0; i < 200; i++) {
    if (spawnSync('redis-cli', ['-p', String(port), 'ping'], { encoding: 'utf8' }).stdout.trim() === 'PONG') {
      return { url: `redis://127.0.0.1:${port}`, proc, stop: () => { proc.kill('SIGKILL'); rmSync(dir, { recursive: true, force: true }); } };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  proc.kill('SIGKILL');
  throw new Error('redis-server did not answer PING');
}

/** The Redis rows for one fsync policy; false when redis-server is not installed. */
async function redisRows(fsync: Fsync, lookup: string, rows: Row[]): Promise<boolean> {
  const redis = await startRedis(fsync);
  if (redis === undefined) return false;
  try {
    const shared = await keys(redisKeyStoreConfig(redis.url));
    await withServer(['--redis-url', redis.url], (s) => {
      rows.push(measure(`1 process, Redis ${fsync}, unlimited key`, s, shared.unlimited, lookup, redis.proc));
      rows.push(measure(`1 process, Redis ${fsync}, daily key`, s, shared.daily, lookup, redis.proc));
    });
    await withServer(['--processes', '2', '--redis-url', redis.url], (s) => {
      rows.push(measure(`2 processes, Redis ${fsync}, daily key`, s, shared.daily, lookup, redis.proc));
    });
  } finally {
    redis.stop();
  }
  return true;
}

async function keys(store: KeyStoreConfig): Promise<{ unlimited: string; daily: string }> {
  return {
    unlimited: await addKey(store, { quota: { kind: 'unlimited' } }),
    daily: await addKey(store, { quota: { kind: 'daily', limit: 1_000_000_000 } }),
  };
}

/** Runs `body` against a server started with `args`, then stops it. */
async function withServer<T>(args: string[], body: (s: BenchServer) => T): Promise<T> {
  const server = await startServer(dataDir, {}, args);
  try {
    return body(server);
  } finally {
    await server.stop();
  }
}

async function main(): Promise<void> {
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed (apt-get install wrk)');
  await ensureFlexDataset(dataDir, names);
  const shards = readManifest(dataDir).shards;
  console.log(`command: node dist/bench/front-ends.js --data ${dataDir} --seconds ${seconds}`);
  console.log(`env: ${environment()}`);
  console.log(`data: ${shards.length} shard(s), ${fmt(shards.reduce((a, s) => a + s.bytes, 0) / 2 ** 20, 0)} MiB`);
  const lookup = `/pdns/v2/lookup/rrset/name/${readFileSync(path.join(dataDir, 'names.txt'), 'utf8').split('\n', 8)[7]}`;

  const rows: Row[] = [];
  const hello = await bareUws();
  const bare = wrk(`http://127.0.0.1:${hello.port}/`, {}, seconds)!;
  hello.stop();

  const local = await keys(sqliteKeyStoreConfig(dataDir));
  await withServer([], (s) => {
    rows.push(measure('1 process, embedded, unlimited key', s, local.unlimited, lookup));
    rows.push(measure('1 process, embedded, daily key', s, local.daily, lookup));
  });
  await withServer(['--processes', '2'], (s) => {
    rows.push(measure('2 processes, embedded, unlimited key', s, local.unlimited, lookup));
    rows.push(measure('2 processes, embedded, daily key', s, local.daily, lookup));
  });
  for (const fsync of ['everysec', 'always'] as const) {
    if (!(await redisRows(fsync, lookup, rows))) {
      console.log('redis-server is not installed (apt-get install redis-server): Redis rows skipped');
      break;
    }
  }

  console.log(`\nwrk -t2 -c100 -d${seconds}s on one exact lookup; CPU in % of one core over the run; memory RSS/PSS MiB after it`);
  console.log(`${'bare uWS hello-world'.padEnd(38)} ${fmt(bare.rps, 0).padStart(8)} req/s`);
  for (const r of rows) {
    console.log(`${r.label.padEnd(38)} ${fmt(r.load.rps, 0).padStart(8)} req/s  p50 ${fmt(r.load.p50, 2)} ms  ` +
      `p99 ${fmt(r.load.p99, 2)} ms  ${fmt((100 * r.load.rps) / bare.rps, 0)}% of bare uWS`);
    console.log(`${''.padEnd(38)} cpu: ${r.cpu}`);
    console.log(`${''.padEnd(38)} memory: ${r.memory}`);
  }
  const rps = (label: string) => rows.find((r) => r.label === label)?.load.rps ?? NaN;
  const base = rps('1 process, embedded, unlimited key');
  for (const fsync of ['everysec', 'always']) {
    const redisDaily = rps(`1 process, Redis ${fsync}, daily key`);
    if (!Number.isFinite(redisDaily)) continue;
    const cost = 1 - redisDaily / base;
    console.log(`Redis quota path, appendfsync ${fsync}: costs ${fmt(100 * cost, 1)}% of the embedded unlimited-key ` +
      `throughput (target <= ${100 * TARGET_COST}%): ${cost <= TARGET_COST ? 'MET' : 'MISSED'}`);
  }
  console.log(`--processes 2 vs 1 (embedded, unlimited): ${fmt(rps('2 processes, embedded, unlimited key') / base, 2)}x`);
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
