// Flexible-search load scenarios (issue 3): concurrent flex queries through
// autocannon (A) and wrk (B), reporting req/s, p50/p99 and the server's
// resident memory; then 1,000 concurrent slow readers of large results (C
// on the flex path, D on the standard-search path), which is the
// backpressure proof: the server's memory must stay bounded by the shard
// mapping plus a per-reader budget instead of growing with what the readers
// have not yet read, and the server must keep answering.
//
//   npm run build && node dist/bench/flex-load.js [--data bench/out/flex-2000000] [--connections 50]
//     [--seconds 10] [--readers 1000] [--slow-seconds 20] [--read-bytes 16384] [--scenarios A,B,C,D] [--per-path]
//
// --per-path adds one autocannon row per path of the mix, run alone.
//
// The dataset is the one bench/flex.ts builds (default bench/out/flex-2000000).
// When that directory does not exist the dataset is built the same way, with
// --names (default 500,000) names (bench/dataset.ts).
//
// The server runs as a child process (`rrscan serve`) on a scratch directory
// that hard-links the dataset's shards and copies its manifest, with its own
// keys.sqlite: the keys this benchmark adds never touch the dataset's store.
// Memory is read from /proc/<pid>/status: VmRSS, VmHWM and RssAnon. Shards
// are memory-mapped, so the pages a scan touches count in RssFile; RssAnon is
// what buffering would grow, and is what the bound below is about.
//
// Baselines measured in the same run: a bare uWebSockets.js hello-world
// (bench/hello-uws.ts) under the same autocannon and wrk settings.
// On 2 shared cores autocannon's own JavaScript saturates near 20,000 req/s;
// wrk (B, /usr/bin/wrk on Debian) shows more of the server's own limit, but
// it too shares the two cores with the server.

import { execFile, spawnSync } from 'node:child_process';
import {
  existsSync, mkdirSync, readFileSync, rmSync, writeFileSync,
} from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import autocannon from 'autocannon';
import { PACKAGE_ROOT } from '../src/config/paths.js';
import { MANIFEST_FILE, readManifest } from '../src/shard/manifest.js';
import { cliAddKey, ensureFlexDataset, servingCopy } from './dataset.js';
import {
  OUT, arg, bareUws, environment, fdsOf, fmt, memOf, percentile, startServer, type BenchServer, type Mem,
} from './common.js';

// The slice of autocannon's API this file uses, wider than bench/autocannon.d.ts
// (whose interfaces are not exported, so they cannot be augmented).
interface CannonStats { average: number; p50: number; p99: number }
interface CannonOptions {
  url: string; connections: number; duration: number; headers: Record<string, string>; timeout: number;
  requests: { method: string; path: string }[];
}
interface CannonResult {
  requests: CannonStats; latency: CannonStats; throughput: CannonStats; non2xx: number; errors: number; timeouts: number;
}
const runCannon = autocannon as unknown as (opts: CannonOptions) => Promise<CannonResult>;

const names = Number(arg('names', '500000'));
const defaultData = path.join(OUT, 'flex-2000000');
const dataArg = arg('data', '');
const dataDir = path.resolve(dataArg !== '' ? dataArg
  : existsSync(path.join(defaultData, MANIFEST_FILE)) ? defaultData : path.join(OUT, `flex-${names}`));
const connections = Number(arg('connections', '50'));
const seconds = Number(arg('seconds', '10'));
const readersWanted = Number(arg('readers', '1000'));
const slowSeconds = Number(arg('slow-seconds', '20'));
const readBytes = Number(arg('read-bytes', '16384'));
const perPath = process.argv.includes('--per-path');
const scenarios = new Set(arg('scenarios', 'A,B,C,D').toUpperCase().split(','));
const WRK = '/usr/bin/wrk';
const WRK_SCRIPT = path.join(PACKAGE_ROOT, 'bench', 'wrk', 'flex-mix.lua');
const MiB = 2 ** 20;
/** Growth of RssAnon allowed whatever the reader count: V8 heap growth under load, pool queues, logs. */
const anonSlackBytes = 64 * MiB;
/**
 * RssAnon one streaming reader may hold, "a few MB": what uWS holds for a
 * stalled socket (LIMITS.writeChunkBytes, 64 KiB, and one result) plus the batches its search may hold
 * from the workers (4 credits per task, tasks per shard up to the thread
 * count, up to 1,024 items each as JS arrays and strings: about 1 MiB with
 * two threads) plus V8 heap slack. A server that buffered whole results would
 * need the result size per reader instead: tens of MB for the match-all below.
 */
const readerBudgetBytes = 4 * MiB;

const enc = encodeURIComponent;
/**
 * The five classes of bench/flex.ts plus rdata and glob variants, with small
 * limits (scenarios A and B). The bench datasets hold A RRsets only and the
 * flex rdata column holds name and text values only, so on them the rdata
 * queries find nothing and cost routing, auth and planning but no scan; the
 * rrnames-only rows show the mix without them.
 */
const MIX: { label: string; path: string }[] = [
  { label: 'rrnames selective', path: `/pdns/v2/regex/rrnames/${enc('^(.*\\.)?paypal[^.]*\\.com\\.$')}?limit=100` },
  { label: 'rrnames substring', path: `/pdns/v2/regex/rrnames/${enc('paypal')}?limit=100` },
  { label: 'rrnames leading wildcard', path: `/pdns/v2/regex/rrnames/${enc('.*-login\\..*')}?limit=100` },
  { label: 'rrnames class-heavy', path: `/pdns/v2/regex/rrnames/${enc('^[a-z0-9]{30,}\\.')}?limit=100` },
  { label: 'rrnames match-all', path: `/pdns/v2/regex/rrnames/${enc('.')}?limit=100` },
  { label: 'rrnames glob', path: `/pdns/v2/glob/rrnames/${enc('*.paypal*.com.')}?limit=100` },
  { label: 'rdata prefix', path: `/pdns/v2/regex/rdata/${enc('^10\\.1[0-9]\\.')}?limit=100` },
  { label: 'rdata suffix', path: `/pdns/v2/regex/rdata/${enc('\\.77$')}?limit=100` },
  { label: 'rdata match-all', path: `/pdns/v2/regex/rdata/${enc('.')}?limit=100` },
  { label: 'rdata glob', path: `/pdns/v2/glob/rdata/${enc('10.2*.*.1')}?limit=100` },
];
const MIX_RUNS = 5;
/** Large results for the slow readers: limit=0 is the key's results_max (1,000,000 here). */
const SLOW_FLEX = `/pdns/v2/regex/rrnames/${enc('.')}?limit=0`;
const SLOW_LOOKUP = `/pdns/v2/lookup/rrset/name/${enc('*.com.')}?limit=0`;
const PROBE_FLEX = `/pdns/v2/regex/rrnames/${enc('paypal')}?limit=10`;

const lines: string[] = [];
const say = (s: string) => { console.log(s); lines.push(s); };

// --- Dataset and scratch directory -------------------------------------------

/** This run's files (removed at the end): the server's data directory and wrk's path lists. */
const scratch = path.join(OUT, `flex-load-${process.pid}`);

// --- Measuring the server ----------------------------------------------------

/** Kernel memory held by all TCP sockets of the machine (bytes): what the server no longer buffers sits here. */
function tcpKernelBytes(): number {
  try {
    const m = /^TCP:.* mem (\d+)$/m.exec(readFileSync('/proc/net/sockstat', 'utf8'));
    return m ? Number(m[1]) * 4096 : NaN;
  } catch {
    return NaN;
  }
}

const mib = (b: number) => `${fmt(b / MiB)} MiB`;
const memText = (m: Mem) => `VmRSS ${mib(m.rss)} (anon ${mib(m.anon)}, file ${mib(m.file)}), VmHWM ${mib(m.hwm)}`;

interface ProbeResult { status: number; ms: number; bytes: number; results: number }

/** One GET on a fresh connection with a deadline; status 0 means it timed out or failed. Counts `obj` lines of small bodies. */
function probe(port: number, pathAndQuery: string, key: string, timeoutMs: number): Promise<ProbeResult> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    let body = '';
    let bytes = 0;
    const done = (status: number) => {
      if (settled) return;
      settled = true;
      const results = body.split('\n').filter((l) => l.startsWith('{"obj"')).length;
      resolve({ status, ms: performance.now() - t0, bytes, results });
    };
    const req = http.request({ host: '127.0.0.1', port, path: pathAndQuery, agent: false,
      headers: { 'X-API-Key': key, Accept: 'application/x-ndjson' } }, (res) => {
      res.on('data', (c: Buffer) => {
        bytes += c.length;
        if (body.length < MiB) body += c.toString('latin1');
      });
      res.on('end', () => done(res.statusCode ?? 0));
      res.on('error', () => done(0));
    });
    req.setTimeout(timeoutMs, () => { req.destroy(); done(0); });
    req.on('error', () => done(0));
    req.end();
  });
}

// --- Load generators ---------------------------------------------------------

interface LoadResult { rps: number; p50: number; p99: number; non2xx: number; errors: number; mibPerSec: number }

async function cannon(port: number, paths: string[], headers: Record<string, string>): Promise<LoadResult> {
  const r = await runCannon({
    url: `http://127.0.0.1:${port}`, connections, duration: seconds, headers, timeout: 30,
    requests: paths.map((p) => ({ method: 'GET', path: p })),
  });
  return { rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, non2xx: r.non2xx,
    errors: r.errors + r.timeouts, mibPerSec: r.throughput.average / MiB };
}

function execText(file: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { encoding: 'utf8', maxBuffer: 1 << 20 }, (err, stdout, stderr) => {
      if (err) reject(new Error(`${file} ${args.join(' ')}: ${err.message}\n${stderr}`));
      else resolve(stdout);
    });
  });
}

const WRK_TIME = /^\s*(\d+)%\s+([\d.]+)(us|ms|s)\s*$/gm;
/** wrk's printed latency to milliseconds. */
const toMs = (v: string, unit: string) => Number(v) * (unit === 'us' ? 1e-3 : unit === 's' ? 1e3 : 1);

async function wrk(port: number, key: string, pathsFile: string): Promise<LoadResult & { command: string }> {
  const args = ['-t2', `-c${connections}`, `-d${seconds}s`, '--latency', '-s', WRK_SCRIPT, `http://127.0.0.1:${port}`,
    '--', key, pathsFile];
  const text = await execText(WRK, args);
  const pct = new Map<number, number>();
  for (const [, p, v, u] of text.matchAll(WRK_TIME)) pct.set(Number(p), toMs(v!, u!));
  const rps = Number(/^Requests\/sec:\s+([\d.]+)/m.exec(text)?.[1] ?? NaN);
  const transfer = /^Transfer\/sec:\s+([\d.]+)(B|KB|MB|GB)/m.exec(text);
  const unit = { B: 1, KB: 1024, MB: MiB, GB: 1024 * MiB }[(transfer?.[2] ?? 'B') as 'B'];
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(text)?.[1] ?? 0);
  const sock = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(text);
  const errors = sock ? sock.slice(1).reduce((a, n) => a + Number(n), 0) : 0;
  return {
    command: `wrk ${args.map((a) => (a === key ? 'KEY' : a)).join(' ')}`,
    rps, p50: pct.get(50) ?? NaN, p99: pct.get(99) ?? NaN, non2xx, errors,
    mibPerSec: transfer ? (Number(transfer[1]) * unit) / MiB : NaN,
  };
}

const loadRow = (label: string, r: LoadResult, base?: LoadResult) =>
  `${label.padEnd(30)} ${fmt(r.rps, 0).padStart(8)} ${fmt(r.p50, 2).padStart(8)} ${fmt(r.p99, 2).padStart(8)} ` +
  `${String(r.non2xx).padStart(7)} ${String(r.errors).padStart(6)} ${fmt(r.mibPerSec, 1).padStart(7)}` +
  (base ? `  ${fmt((100 * r.rps) / base.rps, 0).padStart(3)}% of bare uWS` : '');
const LOAD_HEAD = `${'load'.padEnd(30)} ${'req/s'.padStart(8)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ` +
  `${'non-2xx'.padStart(7)} ${'errors'.padStart(6)} ${'MiB/s'.padStart(7)}`;

// --- Slow readers ------------------------------------------------------------

interface Reader {
  sock: net.Socket;
  status: number;
  bytes: number;
  closed: boolean;
  error: string | undefined;
}

function openReader(port: number, pathAndQuery: string, key: string): Reader {
  // Node's own buffer must hold one second's budget, or the socket could never be read faster than its highWaterMark per tick.
  const sock = net.connect({ host: '127.0.0.1', port, readableHighWaterMark: Math.max(16 << 10, readBytes) } as net.NetConnectOpts);
  const r: Reader = { sock, status: 0, bytes: 0, closed: false, error: undefined };
  // No 'data' listener: the socket stays in paused mode, Node stops reading
  // from the kernel once its own buffer (highWaterMark) is full, and the
  // kernel's receive window then closes: a reader as slow as we make it.
  sock.on('connect', () => {
    sock.write(`GET ${pathAndQuery} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nAccept: application/x-ndjson\r\n\r\n`);
  });
  sock.on('error', (e: NodeJS.ErrnoException) => { r.error = e.code ?? e.message; });
  sock.on('close', () => { r.closed = true; });
  return r;
}

const DRAIN_MS = 2000;
const TERMINATOR = /\{"cond":"(succeeded|limited|failed)"/;

/**
 * Reads every given reader at full speed for DRAIN_MS and counts those whose
 * stream the server has ended (EOF) and whether it ended with a terminator
 * line: a paused socket cannot see the server hang up until its buffered
 * bytes are consumed.
 */
async function drainCheck(rs: Reader[]): Promise<{ ended: number; terminated: number; open: number }> {
  let ended = 0;
  let terminated = 0;
  for (const r of rs) {
    let tail = '';
    r.sock.on('data', (c: Buffer) => { tail = (tail + c.toString('latin1')).slice(-256); });
    r.sock.once('end', () => {
      ended++;
      if (TERMINATOR.test(tail)) terminated++;
    });
    r.sock.resume();
  }
  await new Promise((r) => setTimeout(r, DRAIN_MS));
  return { ended, terminated, open: rs.length - ended };
}

/** Reads at most `budget` bytes from a reader's buffer; parses the status line on the first bytes. */
function sip(r: Reader, budget: number): void {
  while (budget > 0 && !r.closed && !r.sock.destroyed) {
    const n = Math.min(budget, r.sock.readableLength);
    if (n <= 0) return;
    const chunk = r.sock.read(n) as Buffer | null;
    if (!chunk) return;
    if (r.bytes === 0) {
      r.status = Number(/^HTTP\/1\.1 (\d{3})/.exec(chunk.subarray(0, 16).toString('latin1'))?.[1] ?? -1);
      // A refused reader (503, ...) is not a slow reader: hang up so it holds nothing.
      if (r.status !== 200) r.sock.destroy();
    }
    r.bytes += chunk.length;
    budget -= chunk.length;
  }
}

async function slowReaders(label: string, dir: string, slowPath: string, readers: number): Promise<void> {
  const server = await startServer(dir);
  const pid = server.proc.pid!;
  let exited: string | undefined;
  server.proc.on('exit', (code, signal) => { exited = `exit code ${code} signal ${signal}`; });
  const key = cliAddKey(dir);
  try {
    say('');
    say(`scenario ${label}: ${readers} slow readers of GET ${slowPath}, each reading ${readBytes} B/s for ${slowSeconds} s`);
    // Warm the server with one small query (workers up, pages of the query path touched).
    await probe(server.port, PROBE_FLEX, key, 30_000);
    const whole = await probe(server.port, slowPath, key, 120_000);
    say(`  one such response read at full speed: HTTP ${whole.status}, ${mib(whole.bytes)} in ${fmt(whole.ms, 0)} ms`);
    await new Promise((r) => setTimeout(r, 1000));
    const before = memOf(pid);
    const tcpBefore = tcpKernelBytes();
    say(`  before: ${memText(before)}; kernel TCP memory ${mib(tcpBefore)}; server fds ${fdsOf(pid)}`);
    const rs: Reader[] = [];
    for (let i = 0; i < readers; i++) rs.push(openReader(server.port, slowPath, key));

    const pings: number[] = [];
    const pingFails: number[] = [];
    const flexProbes: string[] = [];
    let peakRss = before.rss;
    let peakAnon = before.anon;
    let peakTcp = tcpBefore;
    let pinging = false;
    let flexing = false;
    say(`  ${'t s'.padStart(4)} ${'VmRSS MiB'.padStart(10)} ${'anon MiB'.padStart(9)} ${'VmHWM MiB'.padStart(10)} ` +
      `${'kTCP MiB'.padStart(9)} ${'200s'.padStart(5)} ${'refused'.padStart(7)} ${'srv fds'.padStart(7)} ` +
      `${'read MiB'.padStart(9)} ${'ping ms'.padStart(8)}  flex probe`);
    let lastPing = NaN;
    // Probes only add descriptors, so fewer than before + readers answered 200
    // (and not yet closed by us) means the server has hung up on some.
    const fdsBase = fdsOf(pid);
    let fdsFellAt: number | undefined;
    for (let t = 1; t <= slowSeconds; t++) {
      await new Promise((r) => setTimeout(r, 1000));
      for (const r of rs) sip(r, readBytes);
      if (!pinging) {
        pinging = true;
        void probe(server.port, '/pdns/v2/ping', key, 5_000).then((p) => {
          pinging = false;
          lastPing = p.status === 200 ? p.ms : NaN;
          if (p.status === 200) pings.push(p.ms); else pingFails.push(p.status);
        });
      }
      if (!flexing && t % 2 === 0) {
        flexing = true;
        const started = t;
        void probe(server.port, PROBE_FLEX, key, 10_000).then((p) => {
          flexing = false;
          flexProbes.push(p.status === 0 ? `t${started}:timeout` : `t${started}:${p.status}/${fmt(p.ms, 0)}ms`);
        });
      }
      const m = memOf(pid);
      const k = tcpKernelBytes();
      peakRss = Math.max(peakRss, m.rss);
      peakAnon = Math.max(peakAnon, m.anon);
      peakTcp = Math.max(peakTcp, k);
      const fds = fdsOf(pid);
      const ok = rs.filter((r) => r.status === 200).length;
      if (fdsFellAt === undefined && fds < fdsBase + ok) fdsFellAt = t;
      const refused = rs.filter((r) => r.status !== 0 && r.status !== 200).length;
      const read = rs.reduce((a, r) => a + r.bytes, 0);
      if (t <= 3 || t % 5 === 0 || t === slowSeconds) {
        say(`  ${String(t).padStart(4)} ${fmt(m.rss / MiB).padStart(10)} ${fmt(m.anon / MiB).padStart(9)} ` +
          `${fmt(m.hwm / MiB).padStart(10)} ` +
          `${fmt(k / MiB).padStart(9)} ${String(ok).padStart(5)} ${String(refused).padStart(7)} ${String(fds).padStart(7)} ` +
          `${fmt(read / MiB).padStart(9)} ${fmt(lastPing, 1).padStart(8)}  ${flexProbes.at(-1) ?? ''}`);
      }
      if (exited) break;
    }
    const streaming = rs.filter((r) => r.status === 200).length;
    const statuses = new Map<number, number>();
    for (const r of rs) statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
    const errs = new Map<string, number>();
    for (const r of rs) if (r.error) errs.set(r.error, (errs.get(r.error) ?? 0) + 1);
    const readTotal = rs.reduce((a, r) => a + r.bytes, 0);
    const peakHwm = memOf(pid).hwm;
    const drained = await drainCheck(rs.filter((r) => r.status === 200 && !r.closed));
    for (const r of rs) r.sock.destroy();
    // Give the server time to see the aborts, cancel the scans and free what it held.
    await new Promise((r) => setTimeout(r, 3000));
    const after = memOf(pid);
    const pingAfter = await probe(server.port, '/pdns/v2/ping', key, 5_000);
    const flexAfter = await probe(server.port, PROBE_FLEX, key, 10_000);

    const shardBytes = readManifest(dir).shards.reduce((a, s) => a + s.bytes, 0);
    const anonBound = anonSlackBytes + streaming * readerBudgetBytes;
    const rssBound = before.rss + shardBytes + anonBound;
    const anonGrowth = peakAnon - before.anon;
    const memMet = anonGrowth <= anonBound && peakRss <= rssBound;
    const pingP99 = percentile(pings, 99);
    const aliveMet = exited === undefined && pingAfter.status === 200 && pingFails.length === 0 && pingP99 <= 100;
    const statusText = (s: number): string => (s === 0 ? 'no reply yet' : s === -1 ? 'unparsed' : `HTTP ${s}`);
    say(`  responses: ${[...statuses].map(([s, n]) => `${statusText(s)} x${n}`).join(', ')}` +
      `${errs.size ? `; socket errors: ${[...errs].map(([e, n]) => `${e} x${n}`).join(', ')}` : ''}; read ${mib(readTotal)} in all`);
    say(`  peak (1 s samples): VmRSS ${mib(peakRss)}, RssAnon ${mib(peakAnon)} (+${mib(anonGrowth)}, ` +
      `${fmt(streaming > 0 ? anonGrowth / streaming / 1024 : NaN, 1)} KiB per streaming reader), VmHWM ${mib(peakHwm)}; ` +
      `kernel TCP memory peak ${mib(peakTcp)}`);
    say(`  streams the server had ended, seen by draining every 200 reader for ${DRAIN_MS / 1000} s at the end: ` +
      `${drained.ended} ended (${drained.terminated} with a cond terminator, ${drained.ended - drained.terminated} cut without one), ` +
      `${drained.open} still open; first second at which the server held fewer reader sockets than 200 replies: ${fdsFellAt ?? 'never'}`);
    say(`  after readers closed (+3 s): ${memText(after)}`);
    say(`  ping during: ${pings.length} ok, p50 ${fmt(percentile(pings, 50), 1)} ms, p99 ${fmt(pingP99, 1)} ms, ` +
      `max ${fmt(Math.max(...pings), 1)} ms, ` +
      `${pingFails.length} failed; after: HTTP ${pingAfter.status} in ${fmt(pingAfter.ms, 1)} ms`);
    say(`  flex probe (${decodeURIComponent(PROBE_FLEX)}) during: ${flexProbes.join(' ') || 'none finished'}; ` +
      `after: HTTP ${flexAfter.status} in ${fmt(flexAfter.ms, 0)} ms`);
    if (exited) say(`  SERVER DIED: ${exited}`);
    say(`  bound: RssAnon growth <= ${mib(anonSlackBytes)} + ${streaming} streaming readers x ${mib(readerBudgetBytes)} ` +
      `= ${mib(anonBound)}; VmRSS <= before + shard bytes (${mib(shardBytes)}) + that = ${mib(rssBound)}: ` +
      `${memMet ? 'MET' : 'MISSED'}`);
    say(`  server answers: alive, ping p99 <= 100 ms during, ping after: ${aliveMet ? 'MET' : 'MISSED'}`);
  } finally {
    if (exited === undefined) await server.stop();
  }
}

// --- Main --------------------------------------------------------------------

function fdLimit(): number {
  const r = spawnSync('sh', ['-c', 'ulimit -n'], { encoding: 'utf8' });
  const v = r.stdout.trim();
  return v === 'unlimited' ? Infinity : Number(v);
}

async function main(): Promise<void> {
  await ensureFlexDataset(dataDir, names, say);
  const manifest = readManifest(dataDir);
  const rrsets = manifest.shards.reduce((a, s) => a + s.rrsets, 0);
  const shardBytes = manifest.shards.reduce((a, s) => a + s.bytes, 0);
  const dir = servingCopy(dataDir, scratch);
  const stopOnSignal = () => { rmSync(scratch, { recursive: true, force: true }); process.exit(130); };
  process.once('SIGINT', stopOnSignal);
  say(`command: node dist/bench/flex-load.js --data ${dataDir} --connections ${connections} --seconds ${seconds} ` +
    `--readers ${readersWanted} --slow-seconds ${slowSeconds} --read-bytes ${readBytes} ` +
    `--scenarios ${[...scenarios].join(',')}${perPath ? ' --per-path' : ''}`);
  say(`env: ${environment()}`);
  say(`data: ${rrsets} RRsets in ${manifest.shards.length} shard(s), ${mib(shardBytes)}; server runs on a scratch copy ${dir}`);
  let server: BenchServer | undefined;
  try {
    if (scenarios.has('A') || scenarios.has('B')) {
      server = await startServer(dir);
      const pid = server.proc.pid!;
      const key = cliAddKey(dir);
      const headers = { 'X-API-Key': key, Accept: 'application/x-ndjson' };
      say('');
      say(`query mix: results, bytes, first (cold) request and p50 of ${MIX_RUNS} sequential ones, one connection at a time`);
      for (const m of MIX) {
        const times: number[] = [];
        let first: ProbeResult | undefined;
        for (let i = 0; i <= MIX_RUNS; i++) {
          const p = await probe(server.port, m.path, key, 30_000);
          if (p.status !== 200) throw new Error(`${m.label}: HTTP ${p.status} for ${m.path}`);
          if (first === undefined) first = p;
          else times.push(p.ms);
        }
        say(`  ${m.label.padEnd(26)} ${decodeURIComponent(m.path).padEnd(52)} ${String(first!.results).padStart(4)} ` +
          `${String(first!.bytes).padStart(6)} B ${fmt(first!.ms, 1).padStart(6)} ms cold ` +
          `${fmt(percentile(times, 50), 1).padStart(6)} ms p50`);
      }
      const paths = MIX.map((m) => m.path);
      const rrnamePaths = MIX.filter((m) => m.path.includes('/rrnames/')).map((m) => m.path);
      const memStart = memOf(pid);
      say(`server memory before load: ${memText(memStart)}`);
      const hello = await bareUws();
      let baseCannon: LoadResult | undefined;
      let baseWrk: LoadResult | undefined;
      try {
        if (scenarios.has('A')) baseCannon = await cannon(hello.port, ['/'], {});
        if (scenarios.has('B')) baseWrk = await wrk(hello.port, 'none', writePaths(['/']));
      } finally {
        hello.stop();
      }
      if (scenarios.has('A')) {
        say('');
        say(`scenario A: autocannon, ${connections} connections, ${seconds} s, rotating over the ${MIX.length} paths above`);
        say(LOAD_HEAD);
        say(loadRow('bare uWS hello-world', baseCannon!));
        say(loadRow('rrscan /pdns/v2/ping', await cannon(server.port, ['/pdns/v2/ping'], headers), baseCannon));
        say(loadRow(`rrscan flex mix, all ${paths.length}`, await cannon(server.port, paths, headers), baseCannon));
        say(loadRow(`rrscan flex mix, ${rrnamePaths.length} rrnames`, await cannon(server.port, rrnamePaths, headers), baseCannon));
        if (perPath) {
          for (const m of MIX) say(loadRow(`  alone: ${m.label}`, await cannon(server.port, [m.path], headers), baseCannon));
        }
        say(`server memory after A: ${memText(memOf(pid))}`);
      }
      if (scenarios.has('B')) {
        say('');
        const r = await wrk(server.port, key, writePaths(paths));
        const rr = await wrk(server.port, key, writePaths(rrnamePaths));
        say(`scenario B: ${r.command}`);
        say(LOAD_HEAD);
        say(loadRow('bare uWS hello-world', baseWrk!));
        say(loadRow(`rrscan flex mix, all ${paths.length}`, r, baseWrk));
        say(loadRow(`rrscan flex mix, ${rrnamePaths.length} rrnames`, rr, baseWrk));
        say(`server memory after B: ${memText(memOf(pid))}`);
      }
      await server.stop();
      server = undefined;
    }
    if (scenarios.has('C') || scenarios.has('D')) {
      // Each reader is one socket in this process and one in the server, plus
      // the files, pipes and threads both already hold.
      const limit = fdLimit();
      const readers = Math.min(readersWanted, limit - 200);
      say('');
      say(`ulimit -n: ${limit}; slow readers: ${readers}` +
        (readers < readersWanted ? ` (fewer than the ${readersWanted} asked: the descriptor limit forbids more)` : ''));
      if (scenarios.has('C')) await slowReaders('C (flex, match-all)', dir, SLOW_FLEX, readers);
      if (scenarios.has('D')) await slowReaders('D (standard search, wildcard lookup)', dir, SLOW_LOOKUP, readers);
    }
  } finally {
    if (server) await server.stop();
    rmSync(scratch, { recursive: true, force: true });
    process.off('SIGINT', stopOnSignal);
  }
  say('');
  say(`targets: report req/s and p99 for the flex mix (no target set by the issue); with ${readersWanted} slow readers ` +
    'memory stays bounded (see each bound above) and the server keeps answering');
  mkdirSync(OUT, { recursive: true });
  writeFileSync(path.join(OUT, `flex-load-${new Date().toISOString().slice(0, 19)}.txt`), lines.join('\n') + '\n');
}

/** wrk's list of paths, outside the data directory (the server watches that one). */
function writePaths(paths: string[]): string {
  const file = path.join(scratch, `wrk-paths-${paths.length}.txt`);
  writeFileSync(file, paths.join('\n') + '\n');
  return file;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
