// Shared pieces of the benchmarks: the environment line every run prints,
// percentiles, starting a real server process, and timed HTTP requests.
//
// Every benchmark prints the command that reproduces it, the versions, the
// data size, and a baseline measured in the same run (style.md habit 10).

import { fork, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, readFileSync, readdirSync } from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { PACKAGE_ROOT } from '../src/config/paths.js';

export const BIN = path.join(PACKAGE_ROOT, 'bin', 'rrscan.js');
export const OUT = path.join(PACKAGE_ROOT, 'bench', 'out');

/** Writes `text`'s pieces to `file` as they are made, as fast as the disk takes them (generated inputs of hundreds of MB). */
export async function writeFileFrom(file: string, text: Iterable<string>): Promise<void> {
  await pipeline(Readable.from(text), createWriteStream(file));
}

export function environment(): string {
  const rg = spawnSync('rg', ['--version'], { encoding: 'utf8' });
  return [
    `node ${process.version}`,
    `${os.cpus().length}x ${os.cpus()[0]?.model ?? 'cpu'}`,
    `${Math.round(os.totalmem() / 2 ** 30)} GiB`,
    `rrscan ${process.env['npm_package_version'] ?? ''}`.trim(),
    rg.status === 0 ? rg.stdout.split('\n')[0] : 'ripgrep not installed',
  ].join(' | ');
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export function arg(name: string, fallback: string): string {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && process.argv[i + 1] !== undefined ? process.argv[i + 1]! : fallback;
}

export interface BenchServer {
  port: number;
  /** The metrics listener's port, when started with --metrics-port. */
  metricsPort: number | undefined;
  proc: ChildProcess;
  stop(): Promise<void>;
}

/**
 * `rrscan serve` on a free port, with `args` after the data directory; `bin` runs another checkout's build.
 * `opts.stderr`: a file descriptor for the server's stderr (its log) instead of ours; `opts.nodeArgs`: flags for node.
 */
export async function startServer(dataDir: string, extraEnv: Record<string, string> = {}, args: string[] = [],
  bin = BIN, opts: { stderr?: number; nodeArgs?: string[] } = {}): Promise<BenchServer> {
  const proc = spawn(process.execPath, [...(opts.nodeArgs ?? []), bin, 'serve', '--data', dataDir, '--port', '0', ...args], {
    env: { ...process.env, RRSCAN_LOG_LEVEL: 'warn', ...extraEnv }, stdio: ['ignore', 'pipe', opts.stderr ?? 'inherit'],
  });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at https?:\/\/[^:]+:(\d+)\/pdns\/v2\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  // serve prints its metrics line before the one waited for above.
  const metrics = /rrscan metrics at http:\/\/[^:]+:(\d+)\/metrics/.exec(out);
  return {
    port, proc, metricsPort: metrics ? Number(metrics[1]) : undefined,
    stop: () => new Promise((r) => { proc.once('exit', () => r()); proc.kill('SIGTERM'); }),
  };
}

/** `rrscan keys add` of the build `bin` in `dir` with these quota flags (and --results-max 1000000); the new key. */
export function addKeyWith(bin: string, dir: string, ...quota: string[]): string {
  const r = spawnSync(process.execPath, [bin, 'keys', 'add', '--data', dir, ...quota, '--results-max', '1000000'], { encoding: 'utf8' });
  const key = r.stdout.trim().split('\n').pop()?.trim() ?? '';
  if (r.status !== 0 || !/^[0-9a-f-]{16,}$/.test(key)) throw new Error(`${bin} keys add failed (${r.status}): ${r.stdout}${r.stderr}`);
  return key;
}

const agent = new http.Agent({ keepAlive: true, maxSockets: 64 });

/** One GET; resolves with status, body length and wall milliseconds. */
export function timedGet(
  port: number, pathAndQuery: string, headers: Record<string, string>,
): Promise<{ status: number; bytes: number; ms: number; body: string }> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const req = http.request({ host: '127.0.0.1', port, path: pathAndQuery, headers, agent }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const body = Buffer.concat(chunks).toString();
        resolve({ status: res.statusCode ?? 0, bytes: body.length, ms: performance.now() - t0, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

/**
 * Round-trip ms of `runs` GETs by one curl process over one kept-alive
 * connection (two more first, as warm-up, not counted); undefined without
 * curl. curl's own cost per answer is far below Node's http client's.
 */
export function curlTimes(port: number, url: string, key: string, runs: number): number[] | undefined {
  const full = `http://127.0.0.1:${port}${url}`;
  const r = spawnSync('curl', ['--path-as-is', '-s', '-H', `X-API-Key: ${key}`, '-w', '%{http_code} %{time_total}\\n',
    ...Array.from({ length: runs + 2 }, () => ['-o', '/dev/null', full]).flat()], { encoding: 'utf8' });
  if (r.error || r.status !== 0) return undefined;
  const rows = r.stdout.trim().split('\n').map((l) => l.split(' '));
  if (rows.some((row) => row[0] !== '200')) throw new Error(`curl ${url}: ${r.stdout.slice(0, 200)}`);
  return rows.slice(2).map((row) => Number(row[1]) * 1000);
}

export function rss(pid: number): number {
  const r = spawnSync('ps', ['-o', 'rss=', '-p', String(pid)], { encoding: 'utf8' });
  return Number(r.stdout.trim()) * 1024;
}

const CLOCK_TICKS_PER_S = 100;

/** user+system CPU seconds of a process so far (threads included), from /proc/PID/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_S;
}

/** A process's memory from /proc/PID/status, in bytes (NaN once it has exited), and its thread count. */
export interface Mem { rss: number; hwm: number; anon: number; file: number; threads: number }

const STATUS_FIELD = /^(VmRSS|VmHWM|RssAnon|RssFile|Threads):\s+(\d+)( kB)?$/gm;

/**
 * VmRSS, VmHWM (its peak), and RssAnon apart from RssFile: shards are
 * memory-mapped, so the pages a scan or a merge touches count in RssFile;
 * RssAnon (heap, buffers, malloc arenas) is what buffering or a leak grows.
 */
export function memOf(pid: number): Mem {
  const m: Mem = { rss: NaN, hwm: NaN, anon: NaN, file: NaN, threads: NaN };
  let text = '';
  try {
    text = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return m;
  }
  for (const [, k, v, kB] of text.matchAll(STATUS_FIELD)) {
    const n = Number(v) * (kB ? 1024 : 1);
    if (k === 'VmRSS') m.rss = n;
    else if (k === 'VmHWM') m.hwm = n;
    else if (k === 'RssAnon') m.anon = n;
    else if (k === 'RssFile') m.file = n;
    else m.threads = n;
  }
  return m;
}

/** Descriptors a process holds now (/proc/PID/fd), NaN once it has exited. */
export function fdsOf(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return NaN;
  }
}

/**
 * One scrape of a Prometheus text endpoint (`--metrics-port`): each series
 * (`name{labels}` as printed) to its value.
 */
export async function scrapeMetrics(port: number): Promise<Map<string, number>> {
  const r = await timedGet(port, '/metrics', {});
  if (r.status !== 200) throw new Error(`/metrics answered ${r.status}`);
  const series = new Map<string, number>();
  for (const line of r.body.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const cut = line.lastIndexOf(' ');
    series.set(line.slice(0, cut), Number(line.slice(cut + 1)));
  }
  return series;
}

/** The sum of a scrape's series named `name` whose labels include every `labels` pair (0 when none). */
export function metricSum(series: ReadonlyMap<string, number>, name: string, labels: Record<string, string> = {}): number {
  const want = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  let sum = 0;
  for (const [k, v] of series) {
    const brace = k.indexOf('{');
    if ((brace < 0 ? k : k.slice(0, brace)) !== name) continue;
    if (want.every((w) => k.includes(w))) sum += v;
  }
  return sum;
}

export const fmt = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : 'n/a');

export interface Load {
  rps: number;
  p50: number;
  p99: number;
}

/** wrk on 2 threads (Debian package `wrk`); undefined when it is not installed. A non-2xx answer fails the run. */
export function wrk(url: string, headers: Record<string, string>, seconds: number, connections = 100): Load | undefined {
  const args = ['-t2', `-c${connections}`, `-d${seconds}s`, '--latency'];
  for (const [k, v] of Object.entries(headers)) args.push('-H', `${k}: ${v}`);
  const r = spawnSync('wrk', [...args, url], { encoding: 'utf8' });
  if (r.error) return undefined;
  const ms = (label: string) => {
    const m = new RegExp(`^\\s*${label}\\s+([\\d.]+)(us|ms|s)\\s*$`, 'm').exec(r.stdout);
    if (!m) throw new Error(`wrk output without ${label} latency:\n${r.stdout}${r.stderr}`);
    return Number(m[1]) * (m[2] === 'us' ? 0.001 : m[2] === 's' ? 1000 : 1);
  };
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(r.stdout);
  const non2xx = /Non-2xx or 3xx responses:\s+(\d+)/.exec(r.stdout);
  if (!rps) throw new Error(`wrk output without Requests/sec:\n${r.stdout}${r.stderr}`);
  if (non2xx) throw new Error(`wrk saw ${non2xx[1]} non-2xx responses from ${url}`);
  return { rps: Number(rps[1]), p50: ms('50%'), p99: ms('99%') };
}

/** The baseline: a bare uWebSockets.js hello-world (bench/hello-uws.ts) in its own process. */
export async function bareUws(): Promise<{ port: number; stop: () => void }> {
  const child = fork(new URL('./hello-uws.js', import.meta.url), [], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))));
  return { port, stop: () => child.kill() };
}
