// The request path at memory speed (issue 22): what one small answer costs
// the server beside a bare uWebSockets.js hello-world, in one run, with the
// request log on as shipped (level info, written to a file).
//
//   npm run build && node dist/bench/request-path.js [--data bench/out/flex-2000000] [--names 2000000]
//     [--seconds 5] [--rounds 3] [--connections 64] [--baseline DIR] [--parts load,wide,mix] [--cpu-prof DIR]
//
// Part `load`: wrk -t1 -cN -dS (one client thread: the server gets the other
// core) on ping, an exact lookup with an unlimited key and with a daily-quota
// key, and rate_limit; the two lookups again with the log off
// (RRSCAN_LOG_LEVEL=warn), which is what the log costs. Each server is this
// build and, with --baseline, another checkout's build (main before a
// change); bare uWS hello runs at the start and the end of every round, and
// odd rounds run the servers in reverse order, so the drift of a shared
// machine falls on all alike. Each figure is printed three ways: req/s, its
// ratio to the bare uWS of the same round, and the server's CPU time per
// request (user + system from /proc/PID/stat over the run, divided by the
// requests wrk counted), which the other load on a shared machine moves
// far less than req/s. Medians over the rounds decide the verdicts.
//
// Part `wide`: the latency of a 1,000-row answer (a right-hand wildcard,
// `*.com.` with limit=1000) and of a 10-row one over one kept-alive
// connection (curl), p50 of --runs GETs; the difference over 990 rows is
// the cost of a row.
//
// Part `mix`: autocannon at 100 and 1,000 connections on a mix of flexible
// searches (bench/flex-load.ts scenario A's rrnames queries) and lookups
// (exact names and a wildcard with limit=100), p50/p99, non-2xx and errors,
// beside bare uWS under the same settings.
//
// Targets (issue 22): exact lookup >= 70% of bare uWS with the log on; the
// log costs at most 5% of throughput; a daily key within 10% of an
// unlimited one; rate_limit >= 70%; a 1,000-row lookup <= 1 ms.
// --cpu-prof DIR first runs the load cases once, not counted, on this build's
// server under `node --cpu-prof` (the profile is written when it stops).
// Needs wrk and curl (Debian packages wrk, curl).

import { spawnSync } from 'node:child_process';
import { closeSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { readManifest } from '../src/shard/manifest.js';
import {
  BIN, OUT, addKeyWith, arg, bareUws, cpuSeconds, environment, fmt, percentile, startServer, type BenchServer,
} from './common.js';
import { ensureFlexDataset, servingCopy } from './dataset.js';

const dataDir = path.resolve(arg('data', path.join(OUT, 'flex-2000000')));
const names = Number(arg('names', '2000000'));
const seconds = Number(arg('seconds', '5'));
const rounds = Number(arg('rounds', '3'));
const connections = Number(arg('connections', '64'));
const runs = Number(arg('runs', '41'));
const baseline = arg('baseline', '');
const parts = new Set(arg('parts', 'load,wide,mix').split(','));
const cpuProf = arg('cpu-prof', '');
const WARM_SECONDS = 1;
const MIX_SECONDS = Number(arg('mix-seconds', String(Math.max(seconds, 5))));

const TARGETS = { lookup: 0.70, rateLimit: 0.70, logCost: 0.05, dailyCost: 0.10, wideMs: 1 };

interface Build {
  label: string;
  bin: string;
  /** This build's scratch data directory: hard links to the shards, its own keys made by its own CLI. */
  dir: string;
  unlimited: string;
  daily: string;
}

function scratchBuild(label: string, bin: string, name: string): Build {
  const dir = servingCopy(dataDir, path.join(OUT, `request-path-${process.pid}`, name));
  const add = (...quota: string[]) => addKeyWith(bin, dir, ...quota);
  return { label, bin, dir, unlimited: add('--unlimited'), daily: add('--daily', '1000000000') };
}

interface WrkRun {
  rps: number;
  requests: number;
  p50: number;
  p99: number;
}

/** wrk -t1 on one URL; a non-2xx answer or a socket error fails the run. */
function wrk(url: string, headers: Record<string, string>, secs: number): WrkRun {
  const args = ['-t1', `-c${connections}`, `-d${secs}s`, '--latency'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  const r = spawnSync('wrk', [...args, url], { encoding: 'utf8' });
  if (r.error) throw new Error('wrk is not installed (apt-get install wrk)');
  const text = r.stdout;
  const ms = (label: string) => {
    const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(text);
    return m ? Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1) : NaN;
  };
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(text);
  const total = /(\d+) requests in/.exec(text);
  if (!rps || !total) throw new Error(`wrk output without Requests/sec:\n${text}${r.stderr}`);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(text);
  if (non2xx) throw new Error(`wrk saw ${non2xx[1]} non-2xx responses from ${url}`);
  return { rps: Number(rps[1]), requests: Number(total[1]), p50: ms('50%'), p99: ms('99%') };
}

interface Case {
  label: string;
  path: string;
  key: 'none' | 'unlimited' | 'daily';
  /** Runs with the log off too. */
  logOff: boolean;
}

interface Measured extends WrkRun {
  /** Server CPU microseconds per request served. */
  cpuUs: number;
}

/** Each case on one server: a warm-up, then the measured run with the server's CPU over it. */
function measure(server: BenchServer, b: Build, c: Case): Measured {
  const url = `http://127.0.0.1:${server.port}${c.path}`;
  const headers: Record<string, string> = c.key === 'none' ? {} : { 'X-API-Key': b[c.key] };
  wrk(url, headers, WARM_SECONDS);
  const pid = server.proc.pid!;
  const cpu0 = cpuSeconds(pid);
  const r = wrk(url, headers, seconds);
  return { ...r, cpuUs: (1e6 * (cpuSeconds(pid) - cpu0)) / r.requests };
}

function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length === 0 ? NaN : s.length % 2 === 1 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** The server of build `b` with the log at `level`, its stderr (the request log) in a file. */
async function serverOf(b: Build, level: 'info' | 'warn', profile: boolean): Promise<{ server: BenchServer; logFile: string }> {
  // Beside the data directory, not in it: the server watches that directory, and a log written into it every few ms
  // kept its shard set and key store checking what changed.
  const logFile = path.join(path.dirname(b.dir), `${path.basename(b.dir)}-stderr-${level}.log`);
  const fd = openSync(logFile, 'a');
  try {
    const nodeArgs = profile ? ['--cpu-prof', '--cpu-prof-dir', path.resolve(cpuProf)] : [];
    const server = await startServer(b.dir, { RRSCAN_LOG_LEVEL: level }, [], b.bin, { stderr: fd, nodeArgs });
    return { server, logFile };
  } finally {
    closeSync(fd);
  }
}

async function loadPart(builds: Build[], lookupPath: string): Promise<void> {
  const cases: Case[] = [
    { label: 'ping', path: '/pdns/v2/ping', key: 'none', logOff: false },
    { label: 'exact lookup, unlimited key', path: lookupPath, key: 'unlimited', logOff: true },
    { label: 'exact lookup, daily key', path: lookupPath, key: 'daily', logOff: true },
    { label: 'rate_limit', path: '/pdns/v2/rate_limit', key: 'unlimited', logOff: false },
  ];
  console.log(`\n== load: wrk -t1 -c${connections} -d${seconds}s (after ${WARM_SECONDS} s of warm-up each), ${rounds} rounds`);
  console.log(`exact lookup: ${lookupPath}`);
  // results[build][level][case] = per-round figures; bare[round] = bare uWS req/s (mean of the round's two runs).
  const results = new Map<string, Measured[]>();
  const bare: number[] = [];
  const keyOf = (b: Build, level: string, c: Case) => `${b.label}|${level}|${c.label}`;
  const row = (label: string, m: Measured, bareRps: number) =>
    console.log(`  ${label.padEnd(58)} ${fmt(m.rps, 0).padStart(8)} req/s ${fmt((100 * m.rps) / bareRps, 0).padStart(4)}% of bare  ` +
      `${fmt(m.cpuUs, 2).padStart(6)} us CPU/req  p50 ${fmt(m.p50, 2)} ms  p99 ${fmt(m.p99, 2)} ms`);
  if (cpuProf !== '') {
    // Its own pass, not counted: the profiler slows the server it profiles.
    const self = builds[builds.length - 1]!;
    const { server } = await serverOf(self, 'info', true);
    try {
      for (const c of cases) measure(server, self, c);
    } finally {
      await server.stop();
    }
    console.log(`profile pass (not counted): ${self.label}, log on, every case; the profile is in ${path.resolve(cpuProf)}`);
  }
  for (let round = 0; round < rounds; round++) {
    const order = round % 2 === 1 ? [...builds].reverse() : builds;
    const hello = await bareUws();
    const bareRun = () => wrk(`http://127.0.0.1:${hello.port}/`, {}, seconds);
    wrk(`http://127.0.0.1:${hello.port}/`, {}, WARM_SECONDS);
    const before = bareRun();
    const measured: [string, Measured][] = [];
    for (const b of order) {
      for (const level of ['info', 'warn'] as const) {
        const { server } = await serverOf(b, level, false);
        try {
          for (const c of cases) {
            if (level === 'warn' && !c.logOff) continue;
            const m = measure(server, b, c);
            const k = keyOf(b, level, c);
            results.set(k, [...(results.get(k) ?? []), m]);
            measured.push([`${b.label}, log ${level === 'info' ? 'on' : 'off'}: ${c.label}`, m]);
          }
        } finally {
          await server.stop();
        }
      }
    }
    const after = bareRun();
    hello.stop();
    const bareRps = (before.rps + after.rps) / 2;
    bare.push(bareRps);
    console.log(`round ${round + 1}: bare uWS hello ${fmt(before.rps, 0)} and ${fmt(after.rps, 0)} req/s (mean ${fmt(bareRps, 0)})`);
    for (const [label, m] of measured) row(label, m, bareRps);
  }

  console.log(`\nmedians over ${rounds} rounds (ratio: each round's req/s over that round's bare uWS, then the median); ` +
    `bare uWS ${fmt(median(bare), 0)} req/s`);
  const ratio = (k: string) => median((results.get(k) ?? []).map((m, i) => m.rps / bare[i]!));
  const cpu = (k: string) => median((results.get(k) ?? []).map((m) => m.cpuUs));
  const rps = (k: string) => median((results.get(k) ?? []).map((m) => m.rps));
  for (const b of builds) {
    for (const level of ['info', 'warn'] as const) {
      for (const c of cases) {
        if (level === 'warn' && !c.logOff) continue;
        const k = keyOf(b, level, c);
        const label = `${b.label}, log ${level === 'info' ? 'on' : 'off'}: ${c.label}`;
        console.log(`  ${label.padEnd(58)} ${fmt(rps(k), 0).padStart(8)} req/s ` +
          `${fmt(100 * ratio(k), 0).padStart(4)}% of bare  ${fmt(cpu(k), 2).padStart(6)} us CPU/req`);
      }
    }
  }
  const verdict = (ok: boolean) => (ok ? 'MET' : 'MISSED');
  for (const b of builds) {
    const [ping, look, daily, rl] = cases.map((c) => keyOf(b, 'info', c));
    const lookOff = keyOf(b, 'warn', cases[1]!);
    const dailyOff = keyOf(b, 'warn', cases[2]!);
    console.log(`${b.label}:`);
    console.log(`  ping ${fmt(100 * ratio(ping!), 0)}% of bare uWS`);
    console.log(`  exact lookup, log on: ${fmt(100 * ratio(look!), 0)}% of bare uWS (target >= ${100 * TARGETS.lookup}%): ` +
      `${verdict(ratio(look!) >= TARGETS.lookup)}; log off ${fmt(100 * ratio(lookOff), 0)}%`);
    // Costs from the medians of the ratios (req/s) and of the CPU per request: the second moves less on a shared machine.
    const logCost = 1 - ratio(look!) / ratio(lookOff);
    const logCpu = 1 - cpu(lookOff) / cpu(look!);
    console.log(`  the request log costs ${fmt(100 * logCost, 1)}% of throughput, ${fmt(100 * logCpu, 1)}% of CPU per request ` +
      `(target <= ${100 * TARGETS.logCost}%): ${verdict(Math.min(logCost, logCpu) <= TARGETS.logCost)} ` +
      `(by req/s ${verdict(logCost <= TARGETS.logCost)}, by CPU ${verdict(logCpu <= TARGETS.logCost)})`);
    const dailyCost = 1 - ratio(daily!) / ratio(look!);
    const dailyCpu = 1 - cpu(look!) / cpu(daily!);
    console.log(`  daily key vs unlimited key, log on: costs ${fmt(100 * dailyCost, 1)}% of throughput, ${fmt(100 * dailyCpu, 1)}% ` +
      `of CPU per request (target <= ${100 * TARGETS.dailyCost}%): ${verdict(Math.min(dailyCost, dailyCpu) <= TARGETS.dailyCost)}; ` +
      `log off ${fmt(100 * (1 - ratio(dailyOff) / ratio(lookOff)), 1)}%`);
    console.log(`  rate_limit: ${fmt(100 * ratio(rl!), 0)}% of bare uWS (target >= ${100 * TARGETS.rateLimit}%): ` +
      `${verdict(ratio(rl!) >= TARGETS.rateLimit)}`);
  }
  if (builds.length > 1) {
    const [base, self] = [builds[0]!, builds[builds.length - 1]!];
    console.log(`${self.label} vs ${base.label} (same run):`);
    for (const level of ['info', 'warn'] as const) {
      for (const c of cases) {
        if (level === 'warn' && !c.logOff) continue;
        const a = keyOf(base, level, c);
        const s = keyOf(self, level, c);
        console.log(`  ${`log ${level === 'info' ? 'on' : 'off'}: ${c.label}`.padEnd(40)} req/s ${fmt(rps(s) / rps(a), 2)}x, ` +
          `CPU per request ${fmt(cpu(s), 2)} vs ${fmt(cpu(a), 2)} us (${fmt(cpu(a) / cpu(s), 2)}x fewer)`);
      }
    }
  }
}

/** Round-trip ms of `n` GETs by one curl over one kept-alive connection, and the body of the last. */
function curlTimes(port: number, url: string, key: string, n: number): { ms: number[]; rows: number; bytes: number } {
  const full = `http://127.0.0.1:${port}${url}`;
  const bodyFile = path.join(OUT, `request-path-${process.pid}`, 'wide-body.ndjson');
  const r = spawnSync('curl', ['--path-as-is', '-s', '-H', `X-API-Key: ${key}`, '-w', '%{http_code} %{time_total}\\n',
    ...Array.from({ length: n }, () => ['-o', bodyFile, full]).flat()], { encoding: 'utf8' });
  if (r.error || r.status !== 0) throw new Error(`curl failed (${r.status}): ${r.stderr}`);
  const lines = r.stdout.trim().split('\n').map((l) => l.split(' '));
  if (lines.some((l) => l[0] !== '200')) throw new Error(`curl ${url}: ${r.stdout.slice(0, 200)}`);
  const body = readFileSync(bodyFile, 'latin1');
  return {
    ms: lines.map((l) => Number(l[1]) * 1000), rows: body.split('\n').filter((l) => l.startsWith('{"obj"')).length,
    bytes: statSync(bodyFile).size,
  };
}

async function widePart(builds: Build[]): Promise<void> {
  const wide = '/pdns/v2/lookup/rrset/name/*.com.';
  console.log(`\n== wide: ${wide} over one kept-alive connection (curl), p50 of ${runs} GETs after 5 untimed, log on`);
  for (let round = 0; round < rounds; round++) {
    for (const b of round % 2 === 1 ? [...builds].reverse() : builds) {
      const { server } = await serverOf(b, 'info', false);
      try {
        const out: string[] = [];
        const p50s: number[] = [];
        for (const limit of [10, 1000]) {
          const url = `${wide}?limit=${limit}`;
          curlTimes(server.port, url, b.unlimited, 5);
          const t = curlTimes(server.port, url, b.unlimited, runs);
          const p50 = percentile(t.ms, 50);
          p50s.push(p50);
          out.push(`limit=${limit}: ${t.rows} rows, ${fmt(t.bytes / 1024, 0)} KiB, ` +
            `p50 ${fmt(p50, 3)} ms p90 ${fmt(percentile(t.ms, 90), 3)} ms`);
        }
        const perRow = (1000 * (p50s[1]! - p50s[0]!)) / 990;
        console.log(`round ${round + 1} ${b.label}: ${out.join('; ')}; ${fmt(perRow, 2)} us per extra row; ` +
          `1,000 rows <= ${TARGETS.wideMs} ms: ${p50s[1]! <= TARGETS.wideMs ? 'MET' : 'MISSED'}`);
      } finally {
        await server.stop();
      }
    }
  }
}

// The slice of autocannon's API used here, wider than bench/autocannon.d.ts.
interface CannonStats { average: number; p50: number; p99: number }
interface CannonResult { requests: CannonStats; latency: CannonStats; non2xx: number; errors: number; timeouts: number }
const runCannon = autocannon as unknown as (opts: {
  url: string; connections: number; duration: number; headers: Record<string, string>; timeout: number;
  requests?: { method: string; path: string }[];
}) => Promise<CannonResult>;

async function mixPart(builds: Build[], lookupNames: string[]): Promise<void> {
  const enc = encodeURIComponent;
  // bench/flex-load.ts scenario A's rrnames queries, and lookups: exact names (as partners send most) and a wildcard.
  const mix = [
    `/pdns/v2/regex/rrnames/${enc('^(.*\\.)?paypal[^.]*\\.com\\.$')}?limit=100`,
    `/pdns/v2/regex/rrnames/${enc('paypal')}?limit=100`,
    `/pdns/v2/regex/rrnames/${enc('.*-login\\..*')}?limit=100`,
    `/pdns/v2/glob/rrnames/${enc('*.paypal*.com.')}?limit=100`,
    ...lookupNames.map((n) => `/pdns/v2/lookup/rrset/name/${n}`),
    '/pdns/v2/lookup/rrset/name/*.net.?limit=100',
  ];
  const nofile = Number(spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' }).stdout.trim());
  console.log(`\n== mix: autocannon for ${MIX_SECONDS} s on ${mix.length} paths (${mix.length - lookupNames.length - 1} flexible, ` +
    `${lookupNames.length} exact lookups, 1 wildcard lookup limit=100), unlimited key, log on; ulimit -n ${nofile}`);
  console.log(`${'server'.padEnd(40)} ${'conns'.padStart(5)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(7)} ${'p99 ms'.padStart(7)} ` +
    `${'non-2xx'.padStart(7)} ${'errors'.padStart(6)}`);
  const line = (label: string, conns: number, r: CannonResult, bareRps?: number) =>
    console.log(`${label.padEnd(40)} ${String(conns).padStart(5)} ${fmt(r.requests.average, 0).padStart(8)} ` +
      `${fmt(r.latency.p50, 1).padStart(7)} ` +
      `${fmt(r.latency.p99, 1).padStart(7)} ${String(r.non2xx).padStart(7)} ${String(r.errors + r.timeouts).padStart(6)}` +
      (bareRps !== undefined ? `  ${fmt((100 * r.requests.average) / bareRps, 0)}% of bare uWS` : ''));
  for (const conns of [100, 1000]) {
    const hello = await bareUws();
    const bare = await runCannon({
      url: `http://127.0.0.1:${hello.port}/`, connections: conns, duration: MIX_SECONDS, headers: {}, timeout: 30,
    });
    hello.stop();
    line('bare uWS hello', conns, bare);
    for (const b of builds) {
      const { server } = await serverOf(b, 'info', false);
      try {
        const r = await runCannon({
          url: `http://127.0.0.1:${server.port}`, connections: conns, duration: MIX_SECONDS, timeout: 30,
          headers: { 'X-API-Key': b.unlimited, Accept: 'application/x-ndjson' }, requests: mix.map((p) => ({ method: 'GET', path: p })),
        });
        line(`${b.label}, flex + lookup mix`, conns, r, bare.requests.average);
      } finally {
        await server.stop();
      }
    }
  }
}

async function main(): Promise<void> {
  if (spawnSync('wrk', ['--version']).error) throw new Error('wrk is not installed (apt-get install wrk)');
  await ensureFlexDataset(dataDir, names);
  const all = readFileSync(path.join(dataDir, 'names.txt'), 'utf8').split('\n', 400).filter((n) => n !== '');
  const lookupPath = `/pdns/v2/lookup/rrset/name/${all[7]}`;
  const shards = readManifest(dataDir).shards;
  console.log(`command: node dist/bench/request-path.js --data ${dataDir} --seconds ${seconds} --rounds ${rounds} ` +
    `--connections ${connections} --runs ${runs} --parts ${[...parts].join(',')}` + (baseline !== '' ? ` --baseline ${baseline}` : '') +
    (cpuProf !== '' ? ` --cpu-prof ${cpuProf}` : ''));
  console.log(`env: ${environment()}`);
  console.log(`data: ${shards.reduce((a, s) => a + s.rrsets, 0)} RRsets in ${shards.length} shard(s); request log on = ` +
    'RRSCAN_LOG_LEVEL=info, stderr to a file (as shipped); off = warn');
  const builds: Build[] = [];
  try {
    if (baseline !== '') {
      builds.push(scratchBuild(`baseline ${baseline}`, path.join(path.resolve(baseline), 'bin', 'rrscan.js'), 'baseline'));
    }
    builds.push(scratchBuild('this build', BIN, 'this'));
    if (parts.has('load')) await loadPart(builds, lookupPath);
    if (parts.has('wide')) await widePart(builds);
    if (parts.has('mix')) await mixPart(builds, all.filter((_, i) => i % 40 === 7).slice(0, 8));
  } finally {
    rmSync(path.join(OUT, `request-path-${process.pid}`), { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
