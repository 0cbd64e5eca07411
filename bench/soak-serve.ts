// Soak of the server (issue 21): a real `rrscan serve --metrics-port 0` on
// a dataset under a mixed load for --minutes, sampled every
// --sample-seconds; at the end a table of the samples, a plateau verdict on
// its memory, descriptors, threads and open streams, and a check that every
// stream that completed ended with exactly one terminator.
//
//   npm run build && node dist/bench/soak-serve.js [--minutes 60] [--data bench/out/flex-2000000] [--connections 100]
//     [--sample-seconds 60] [--hangups 8] [--hangup-pause-ms 200] [--slow-readers 4] [--slow-bytes-per-s 262144]
//     [--baseline-seconds 30]
//
// The load, all at once for the whole run:
// - autocannon (in a child process of its own, so that its JavaScript, which
//   saturates a core, does not delay this process's samples and probes),
//   --connections kept-alive connections, each rotating over a mix of 24
//   requests: the six rrnames classes of flex-load.ts (limit=100), eight
//   exact lookups of names in the dataset, six wildcard lookups (right-hand
//   under a name's parent and under com., left-hand on a name's first label;
//   limit=100), and rate_limit; every 200 stream answer is checked for its
//   one terminator as it arrives;
// - --hangups clients that each, in a loop, ask for a large answer (the
//   match-all flex query or the *.com. lookup, limit=0, alternately), read a
//   random number of bytes (log-uniform up to 4 MiB, a tenth of them none at
//   all: hung up right after the request) and destroy the socket, then wait
//   --hangup-pause-ms;
// - --slow-readers clients that each, in a loop, read a large answer (flex
//   match-all limit=50000, the *.com. lookup limit=0) to its end at
//   --slow-bytes-per-s (in quarter-second budgets, fast enough that uWS's
//   10 s cut of a stalled reader never applies) and check its terminator.
//
// Each sample: the server's /proc/PID/status (VmRSS, RssAnon, RssFile,
// threads), descriptors, CPU over the interval; autocannon's req/s, p50 and
// p99 over the interval (from each response's time, in 1% buckets, so the
// bench's own memory stays flat), non-2xx and errors; the hang-ups and slow
// reads done; the median and worst of 5 pings on fresh connections; and the
// server's --metrics-port counters (streams open, client hang-ups, slow
// reader cuts, 503s). After the run, with every client gone, one more
// sample: streams open must be back to 0 within 10 s.
//
// Verdict (soak-report.ts): RssAnon, descriptors, threads and open streams.
// RssAnon because mapped shard pages, which any query may touch, count in
// RssFile and are bounded by the shard bytes; anything the server buffers
// or leaks is anonymous. Exit status 1 on a RISING verdict for any of them,
// streams left open after the clients are gone, a stream that completed
// without exactly one terminator, or the server dying.
// Baselines in the same run: the server's memory, descriptors and ping on a
// fresh connection while idle, after one request of each kind; then the
// autocannon mix alone for --baseline-seconds (the "alone" row) before the
// side load starts and the --minutes begin.

import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { readManifest } from '../src/shard/manifest.js';
import { seededRandom } from '../src/demo/prng.js';
import {
  OUT, arg, cpuSeconds, environment, fdsOf, fmt, memOf, metricSum, percentile, scrapeMetrics, startServer, type BenchServer, type Mem,
} from './common.js';
import { NAMES_FILE, cliAddKey, ensureFlexDataset, servingCopy } from './dataset.js';
import { PLATEAU_RULE_TEXT, judgePlateau, sampleTable, type Column } from './soak-report.js';

const minutes = Number(arg('minutes', '60'));
const dataDir = path.resolve(arg('data', path.join(OUT, 'flex-2000000')));
const names = Number(arg('names', /flex-(\d+)$/.exec(dataDir)?.[1] ?? '2000000'));
const connections = Number(arg('connections', '100'));
const sampleSeconds = Number(arg('sample-seconds', '60'));
const hangups = Number(arg('hangups', '8'));
const hangupPauseMs = Number(arg('hangup-pause-ms', '200'));
const slowReaders = Number(arg('slow-readers', '4'));
const slowBytesPerSec = Number(arg('slow-bytes-per-s', '262144'));
const baselineSeconds = Number(arg('baseline-seconds', '30'));

const COMMAND = `node dist/bench/soak-serve.js --minutes ${minutes} --data ${path.relative(process.cwd(), dataDir) || '.'} ` +
  `--connections ${connections} --sample-seconds ${sampleSeconds} --hangups ${hangups} --hangup-pause-ms ${hangupPauseMs} ` +
  `--slow-readers ${slowReaders} --slow-bytes-per-s ${slowBytesPerSec} --baseline-seconds ${baselineSeconds}`;
const MiB = 2 ** 20;
const STAMP = new Date().toISOString().slice(0, 19).replace(/:/g, '-');
const enc = encodeURIComponent;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** flex-load.ts's six rrnames classes (flex.ts's five and a glob), with small limits. */
const FLEX = [
  `/pdns/v2/regex/rrnames/${enc('^(.*\\.)?paypal[^.]*\\.com\\.$')}?limit=100`,
  `/pdns/v2/regex/rrnames/${enc('paypal')}?limit=100`,
  `/pdns/v2/regex/rrnames/${enc('.*-login\\..*')}?limit=100`,
  `/pdns/v2/regex/rrnames/${enc('^[a-z0-9]{30,}\\.')}?limit=100`,
  `/pdns/v2/regex/rrnames/${enc('.')}?limit=100`,
  `/pdns/v2/glob/rrnames/${enc('*.paypal*.com.')}?limit=100`,
];
const HANGUP_PATHS = [`/pdns/v2/regex/rrnames/${enc('.')}?limit=0`, `/pdns/v2/lookup/rrset/name/${enc('*.com.')}?limit=0`];
const SLOW_PATHS = [`/pdns/v2/regex/rrnames/${enc('.')}?limit=50000`, `/pdns/v2/lookup/rrset/name/${enc('*.com.')}?limit=0`];
const HANGUP_BYTES_MAX = 4 * MiB;
const TERMINATOR = /^\{"cond":"(succeeded|limited|failed)"/;
const isStream = (p: string) => p.includes('/regex/') || p.includes('/glob/') || p.includes('/lookup/');

/** The mix every autocannon connection rotates over, from names in the dataset. */
function mix(sample: string[]): string[] {
  const at = (i: number) => sample[Math.floor((i * sample.length) / 8)]!;
  const exact = Array.from({ length: 8 }, (_, i) => `/pdns/v2/lookup/rrset/name/${at(i)}`);
  const parent = (n: string) => n.slice(n.indexOf('.') + 1);
  const wildcard = [
    ...[1, 3, 5].map((i) => `/pdns/v2/lookup/rrset/name/*.${parent(at(i))}?limit=100`),
    `/pdns/v2/lookup/rrset/name/*.com.?limit=100`,
    ...[2, 6].map((i) => `/pdns/v2/lookup/rrset/name/${at(i).split('.')[0]}.*?limit=100`),
  ];
  const paths: string[] = [];
  // Interleaved, so that no connection runs one kind for long.
  for (let i = 0; i < 8; i++) {
    paths.push(FLEX[i % FLEX.length]!, exact[i]!);
    if (i < wildcard.length) paths.push(wildcard[i]!);
    if (i % 4 === 0) paths.push('/pdns/v2/rate_limit');
  }
  return paths;
}

// --- The autocannon child ------------------------------------------------------

interface CannonRequest { method: string; path: string; onResponse?: (status: number, body: string) => void }
interface CannonTracker extends PromiseLike<unknown> {
  on(event: 'response', f: (client: unknown, status: number, bytes: number, ms: number) => void): void;
  on(event: 'reqError', f: (err: Error) => void): void;
  stop(): void;
}
const runCannon = autocannon as unknown as (opts: {
  url: string; connections: number; duration: number; headers: Record<string, string>; timeout: number; requests: CannonRequest[];
}) => CannonTracker;

/** Latencies in buckets 1% wide from 10 us up: constant memory over an hour, percentiles within 1%. */
class LatencyBuckets {
  private static readonly BASE_MS = 0.01;
  private static readonly STEP = Math.log(1.01);
  private readonly counts = new Float64Array(2048);
  n = 0;
  add(ms: number): void {
    const b = Math.max(0, Math.min(this.counts.length - 1, Math.floor(Math.log(Math.max(ms, LatencyBuckets.BASE_MS) /
      LatencyBuckets.BASE_MS) / LatencyBuckets.STEP)));
    this.counts[b]!++;
    this.n++;
  }
  percentile(p: number): number {
    let seen = 0;
    for (let b = 0; b < this.counts.length; b++) {
      seen += this.counts[b]!;
      if (seen >= (p / 100) * this.n && seen > 0) return LatencyBuckets.BASE_MS * Math.exp((b + 1) * LatencyBuckets.STEP);
    }
    return NaN;
  }
}

interface CannonInterval {
  responses: number; non2xx: number; errors: number; p50: number; p99: number;
  /** Stream answers (200) checked, and those without exactly one terminator at their end. */
  streams: number; badStreams: number; bad: string[];
}

/** In the child: autocannon for the whole run; answers 'sample' with the interval's figures, 'stop' with the last. */
function cannonChild(): void {
  const { port, key, paths, seconds, connections: conns } = JSON.parse(process.env['SOAK_CANNON']!) as
    { port: number; key: string; paths: string[]; seconds: number; connections: number };
  let lat = new LatencyBuckets();
  let cur: Omit<CannonInterval, 'p50' | 'p99'> = { responses: 0, non2xx: 0, errors: 0, streams: 0, badStreams: 0, bad: [] };
  const check = (p: string) => (status: number, body: string) => {
    if (status !== 200) return;
    cur.streams++;
    const lines = body.split('\n').filter((l) => l !== '');
    const ends = lines.filter((l) => TERMINATOR.test(l)).length;
    if (lines[0] !== '{"cond":"begin"}' || ends !== 1 || !TERMINATOR.test(lines.at(-1) ?? '')) {
      cur.badStreams++;
      if (cur.bad.length < 3) cur.bad.push(`${decodeURIComponent(p)}: ${ends} terminators, ends ${JSON.stringify(lines.at(-1) ?? '')}`);
    }
  };
  const tracker = runCannon({
    url: `http://127.0.0.1:${port}`, connections: conns, duration: seconds, timeout: 30,
    headers: { 'X-API-Key': key, Accept: 'application/x-ndjson' },
    requests: paths.map((p) => (isStream(p) ? { method: 'GET', path: p, onResponse: check(p) } : { method: 'GET', path: p })),
  });
  tracker.on('response', (_c, status, _bytes, ms) => {
    cur.responses++;
    if (status < 200 || status > 299) cur.non2xx++;
    else lat.add(ms);
  });
  tracker.on('reqError', () => { cur.errors++; });
  const interval = (): CannonInterval => {
    const r = { ...cur, p50: lat.percentile(50), p99: lat.percentile(99) };
    lat = new LatencyBuckets();
    cur = { responses: 0, non2xx: 0, errors: 0, streams: 0, badStreams: 0, bad: [] };
    return r;
  };
  process.on('message', (m: string) => {
    if (m === 'sample') process.send!(interval());
    if (m === 'stop') {
      tracker.stop();
      void Promise.resolve(tracker).then(() => process.send!(interval(), () => process.exit(0)));
    }
  });
  process.send!('started');
}

class Cannon {
  private readonly waiting: ((r: CannonInterval) => void)[] = [];
  private constructor(readonly child: ChildProcess) {
    child.on('message', (m: CannonInterval | string) => {
      if (typeof m !== 'string') this.waiting.shift()?.(m);
    });
  }

  static async start(port: number, key: string, paths: string[]): Promise<Cannon> {
    const child = fork(fileURLToPath(import.meta.url), [], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      env: { ...process.env, SOAK_CANNON: JSON.stringify({ port, key, paths, connections, seconds: minutes * 60 + 3600 }) },
    });
    await new Promise<void>((resolve, reject) => {
      child.once('message', () => resolve());
      child.once('exit', (code) => reject(new Error(`autocannon child exited ${code}`)));
    });
    return new Cannon(child);
  }

  private ask(m: string): Promise<CannonInterval> {
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      this.child.send(m);
    });
  }

  sample(): Promise<CannonInterval> {
    return this.ask('sample');
  }

  async stop(): Promise<CannonInterval> {
    const exited = new Promise((r) => this.child.once('exit', r));
    const last = await this.ask('stop');
    await exited;
    return last;
  }
}

// --- Side load: hang-ups and slow readers -----------------------------------------

interface SideLoad {
  hangups: number;
  /** Hang-ups by what the client had seen: nothing (hung up right after the request), headers or body bytes. */
  early: number;
  errors: number;
  slowDone: number;
  slowOk: number;
  /** Slow reads answered with another status than 200 (a 503 when the server holds its most streams): no stream to check. */
  slowRefused: number;
  slowBad: string[];
  slowCut: number;
  slowBytes: number;
  stop: boolean;
}

function request(key: string, p: string): string {
  return `GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\nAccept: application/x-ndjson\r\n\r\n`;
}

/** One client that asks for large answers and hangs up after a random number of bytes, until side.stop. */
async function hangupClient(port: number, key: string, id: number, side: SideLoad): Promise<void> {
  const rng = seededRandom(500 + id);
  for (let n = 0; !side.stop; n++) {
    const target = rng() < 0.1 ? 0 : Math.floor(Math.exp(rng() * Math.log(HANGUP_BYTES_MAX)));
    await new Promise<void>((resolve) => {
      const sock = net.connect(port, '127.0.0.1');
      let got = 0;
      sock.on('connect', () => {
        sock.write(request(key, HANGUP_PATHS[n % HANGUP_PATHS.length]!));
        if (target === 0) {
          side.early++;
          sock.destroy();
        }
      });
      sock.on('data', (d: Buffer) => {
        got += d.length;
        if (got >= target) sock.destroy();
      });
      sock.on('error', () => { side.errors++; });
      // The server ending an answer first (smaller than the target) is not a hang-up; close follows either way.
      sock.on('close', () => {
        if (got >= target) side.hangups++;
        resolve();
      });
    });
    await sleep(hangupPauseMs);
  }
}

/** One client that reads large answers to their end at slowBytesPerSec, checking each one's terminator. */
async function slowReader(port: number, key: string, id: number, side: SideLoad): Promise<void> {
  const quarter = slowBytesPerSec / 4;
  for (let n = id; !side.stop; n++) {
    const p = SLOW_PATHS[n % SLOW_PATHS.length]!;
    await new Promise<void>((resolve) => {
      const headers = { 'X-API-Key': key, Accept: 'application/x-ndjson' };
      const req = http.get({ host: '127.0.0.1', port, path: p, agent: false, headers }, (res) => {
        let budget = quarter;
        let tail = '';
        let last = '';
        let ends = 0;
        const timer = setInterval(() => {
          budget = quarter;
          if (side.stop) res.destroy();
          else if (res.isPaused()) res.resume();
        }, 250);
        res.on('data', (c: Buffer) => {
          side.slowBytes += c.length;
          budget -= c.length;
          if (budget <= 0) res.pause();
          const text = tail + c.toString('latin1');
          const lines = text.split('\n');
          tail = lines.pop()!;
          for (const l of lines) {
            if (l === '') continue;
            last = l;
            if (TERMINATOR.test(l)) ends++;
          }
        });
        res.on('end', () => {
          clearInterval(timer);
          if (res.statusCode !== 200) {
            side.slowRefused++;
            resolve();
            return;
          }
          side.slowDone++;
          if (ends === 1 && TERMINATOR.test(last) && tail === '') side.slowOk++;
          else if (side.slowBad.length < 5) {
            side.slowBad.push(`${decodeURIComponent(p)}: HTTP ${res.statusCode}, ${ends} terminators, ends ${last}`);
          }
          resolve();
        });
        res.on('close', () => {
          clearInterval(timer);
          if (!res.complete) {
            if (!side.stop) side.slowCut++;
            resolve();
          }
        });
      });
      req.on('error', () => {
        if (!side.stop) side.slowCut++;
        resolve();
      });
    });
  }
}

// --- Probes and samples ------------------------------------------------------------

/** A GET on a fresh connection: milliseconds to the whole answer, NaN when it failed or took over 5 s. */
function freshPing(port: number): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: '/pdns/v2/ping', agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode === 200 ? performance.now() - t0 : NaN));
    });
    req.setTimeout(5000, () => { req.destroy(); resolve(NaN); });
    req.on('error', () => resolve(NaN));
  });
}

async function pings(port: number, n: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(await freshPing(port));
  return out;
}

interface Sample {
  label: string;
  minute: number;
  cannon: CannonInterval;
  rps: number;
  hangups: number;
  slowDone: number;
  pingMs: number;
  pingMaxMs: number;
  /** Pings that failed or took over 5 s. */
  pingFails: number;
  streamsOpen: number;
  serverHangups: number;
  slowCuts: number;
  overloads: number;
  mem: Mem;
  cpu: number;
  fds: number;
}

const mib = (b: number) => fmt(b / MiB, 0);
/** autocannon's figures, none in the row sampled after it stopped. */
const load = (s: Sample, cell: () => string) => (s.label === 'after' ? '-' : cell());
const COLUMNS: Column<Sample>[] = [
  { head: 'min', cell: (s) => s.label },
  { head: 'req/s', cell: (s) => load(s, () => fmt(s.rps, 0)) },
  { head: 'p50 ms', cell: (s) => load(s, () => fmt(s.cannon.p50, 2)) },
  { head: 'p99 ms', cell: (s) => load(s, () => fmt(s.cannon.p99, 1)) },
  { head: 'non-2xx', cell: (s) => load(s, () => String(s.cannon.non2xx)) },
  { head: 'errors', cell: (s) => load(s, () => String(s.cannon.errors)) },
  { head: 'streams', cell: (s) => load(s, () => String(s.cannon.streams)) },
  { head: 'bad', cell: (s) => load(s, () => String(s.cannon.badStreams)) },
  { head: 'hang-ups', cell: (s) => String(s.hangups) },
  { head: 'slow done', cell: (s) => String(s.slowDone) },
  { head: 'ping ms', cell: (s) => `${fmt(s.pingMs, 1)}/${fmt(s.pingMaxMs, 1)}${s.pingFails ? ` ${s.pingFails} failed` : ''}` },
  { head: 'open', cell: (s) => String(s.streamsOpen) },
  { head: 'srv hang-ups', cell: (s) => String(s.serverHangups) },
  { head: 'slow cuts', cell: (s) => String(s.slowCuts) },
  { head: '503s', cell: (s) => String(s.overloads) },
  { head: 'VmRSS', cell: (s) => mib(s.mem.rss) },
  { head: 'RssAnon', cell: (s) => mib(s.mem.anon) },
  { head: 'RssFile', cell: (s) => mib(s.mem.file) },
  { head: 'VmHWM', cell: (s) => mib(s.mem.hwm) },
  { head: 'cpu %', cell: (s) => fmt(s.cpu, 0) },
  { head: 'fds', cell: (s) => String(s.fds) },
  { head: 'threads', cell: (s) => String(s.mem.threads) },
];

// --- Main --------------------------------------------------------------------

const lines: string[] = [];
const say = (s: string) => { console.log(s); lines.push(s); };

/** Names from the dataset's names.txt (its first MiB: the names are in no order). */
function datasetNames(): string[] {
  const text = readFileSync(path.join(dataDir, NAMES_FILE), { encoding: 'latin1' }).slice(0, MiB);
  return text.split('\n').slice(0, -1).filter((n) => n.endsWith('.'));
}

async function main(): Promise<void> {
  await ensureFlexDataset(dataDir, names, say);
  const manifest = readManifest(dataDir);
  const scratch = path.join(OUT, `soak-serve-${process.pid}`);
  const dir = servingCopy(dataDir, scratch);
  const key = cliAddKey(dir);
  const paths = mix(datasetNames());
  say(`command: ${COMMAND}`);
  say(`env: ${environment()}`);
  say(`data: ${manifest.shards.reduce((a, s) => a + s.rrsets, 0)} RRsets in ${manifest.shards.length} shard(s), ` +
    `${mib(manifest.shards.reduce((a, s) => a + s.bytes, 0))} MiB; served from a scratch copy ${dir}`);
  say(`load: autocannon ${connections} connections rotating over ${paths.length} requests ` +
    `(${paths.filter((p) => p.includes('/regex/') || p.includes('/glob/')).length} flex, ` +
    `${paths.filter((p) => p.includes('/lookup/')).length} lookups, ${paths.filter((p) => p.endsWith('rate_limit')).length} rate_limit); ` +
    `${hangups} hang-up clients (${HANGUP_PATHS.map(decodeURIComponent).join(', ')}; up to ${HANGUP_BYTES_MAX / MiB} MiB, ` +
    `then ${hangupPauseMs} ms); ${slowReaders} slow readers at ${slowBytesPerSec / 1024} KiB/s ` +
    `(${SLOW_PATHS.map(decodeURIComponent).join(', ')})`);
  say(`samples every ${sampleSeconds} s for ${minutes} min; ${PLATEAU_RULE_TEXT}`);

  let server: BenchServer | undefined;
  let cannon: Cannon | undefined;
  const side: SideLoad = {
    hangups: 0, early: 0, errors: 0, slowDone: 0, slowOk: 0, slowRefused: 0, slowBad: [], slowCut: 0, slowBytes: 0, stop: false,
  };
  const stopOnSignal = () => {
    cannon?.child.kill('SIGKILL');
    server?.proc.kill('SIGKILL');
    rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', stopOnSignal);
  let failed = false;
  try {
    server = await startServer(dir, {}, ['--metrics-port', '0']);
    const s = server;
    const pid = s.proc.pid!;
    let died: string | undefined;
    s.proc.once('exit', (code, signal) => { died = `exit code ${code} signal ${signal}`; });
    const metricsPort = s.metricsPort!;

    // Baseline: one request of each kind (workers up, the pages of each query path touched), then idle figures.
    for (const p of [...new Set([...paths, ...SLOW_PATHS])]) {
      await new Promise<void>((resolve, reject) => {
        http.get({ host: '127.0.0.1', port: s.port, path: p, agent: false, headers: { 'X-API-Key': key } }, (res) => {
          if (res.statusCode !== 200) reject(new Error(`warm-up: HTTP ${res.statusCode} for ${p}`));
          res.resume();
          res.on('end', () => resolve());
        }).on('error', reject);
      });
    }
    await sleep(1000);
    const idle = memOf(pid);
    const idleFds = fdsOf(pid);
    const idlePings = (await pings(s.port, 20)).filter((v) => !Number.isNaN(v));
    say(`baseline, idle after one request of each kind: VmRSS ${mib(idle.rss)} MiB, RssAnon ${mib(idle.anon)} MiB, ` +
      `RssFile ${mib(idle.file)} MiB, ${idleFds} fds, ${idle.threads} threads; ping on a fresh connection p50 ` +
      `${fmt(percentile(idlePings, 50), 2)} ms, max ${fmt(Math.max(...idlePings), 2)} ms (${idlePings.length} of 20 answered)`);

    cannon = await Cannon.start(s.port, key, paths);
    const c = cannon;
    let t0 = performance.now();
    const samples: Sample[] = [];
    let lastAt = t0;
    let lastCpu = cpuSeconds(pid);
    let last = { hangups: 0, slowDone: 0, serverHangups: 0, slowCuts: 0, overloads: 0 };
    const sample = async (label: string, interval: CannonInterval): Promise<Sample> => {
      const now = performance.now();
      const cpu = cpuSeconds(pid);
      const m = await scrapeMetrics(metricsPort);
      const p = await pings(s.port, 5);
      const totals = {
        hangups: side.hangups, slowDone: side.slowDone,
        serverHangups: metricSum(m, 'rrscan_stream_client_hangups_total'),
        slowCuts: metricSum(m, 'rrscan_stream_slow_reader_cuts_total'),
        overloads: metricSum(m, 'rrscan_overload_refusals_total'),
      };
      const r: Sample = {
        label, minute: (now - t0) / 60_000, cannon: interval, rps: (interval.responses * 1000) / (now - lastAt),
        hangups: totals.hangups - last.hangups, slowDone: totals.slowDone - last.slowDone,
        pingMs: percentile(p.filter((v) => !Number.isNaN(v)), 50), pingMaxMs: Math.max(...p.filter((v) => !Number.isNaN(v))),
        pingFails: p.filter((v) => Number.isNaN(v)).length,
        streamsOpen: metricSum(m, 'rrscan_streams_open'),
        serverHangups: totals.serverHangups - last.serverHangups, slowCuts: totals.slowCuts - last.slowCuts,
        overloads: totals.overloads - last.overloads,
        mem: memOf(pid), cpu: (100_000 * (cpu - lastCpu)) / (now - lastAt), fds: fdsOf(pid),
      };
      last = totals;
      lastAt = now;
      lastCpu = cpu;
      return r;
    };
    // Baseline: the mix alone, before the side load starts.
    await sleep(baselineSeconds * 1000);
    const alone = await sample('alone', await c.sample());
    const clients = [
      ...Array.from({ length: hangups }, (_, i) => hangupClient(s.port, key, i, side)),
      ...Array.from({ length: slowReaders }, (_, i) => slowReader(s.port, key, i, side)),
    ];
    t0 = performance.now();
    const count = Math.max(1, Math.round((minutes * 60) / sampleSeconds));
    for (let i = 1; i <= count && died === undefined; i++) {
      await sleep(Math.max(0, t0 + i * sampleSeconds * 1000 - performance.now()));
      const r = await sample(fmt((i * sampleSeconds) / 60, sampleSeconds % 60 === 0 ? 0 : 1), await c.sample());
      samples.push(r);
      console.log(`  ${r.label} min: ${fmt(r.rps, 0)} req/s, p99 ${fmt(r.cannon.p99, 1)} ms, ${r.hangups} hang-ups, ` +
        `ping ${fmt(r.pingMs, 1)} ms; VmRSS ${mib(r.mem.rss)} MiB, RssAnon ${mib(r.mem.anon)} MiB, ${r.fds} fds, ${r.streamsOpen} open`);
    }
    const tail = await c.stop();
    cannon = undefined;
    side.stop = true;
    await Promise.all(clients);
    // Every client gone: the server should hold no stream, and its descriptors fall back.
    let after: Sample | undefined;
    for (let waited = 0; waited <= 10; waited++) {
      await sleep(1000);
      after = await sample('after', tail);
      if (after.streamsOpen === 0) break;
    }
    if (died !== undefined) throw new Error(`the server died during the run: ${died}`);

    say('');
    for (const l of sampleTable([alone, ...samples, after!], COLUMNS)) say(l);
    say('(per interval: req/s, p50/p99 and non-2xx of autocannon\'s answers, errors (its timeouts included), streams: 200 stream ' +
      'answers it checked, bad: those without exactly one terminator at their end; hang-ups and slow reads done; ping: median/worst ' +
      'of 5 on fresh connections; open: the server\'s streams open at the sample; srv hang-ups, slow cuts, 503s: the server\'s ' +
      'counters over the interval; memory in MiB; cpu: the server\'s, % of one core; "alone": the baseline, autocannon\'s mix ' +
      `for ${baselineSeconds} s before the side load started; "after": every client gone)`);
    const all = [alone, ...samples];
    const streams = all.reduce((a, r) => a + r.cannon.streams, 0) + tail.streams;
    const bad = all.reduce((a, r) => a + r.cannon.badStreams, 0) + tail.badStreams;
    const examples = [...all.flatMap((r) => r.cannon.bad), ...tail.bad].slice(0, 5);
    say(`autocannon: ${streams} stream answers checked, ${bad} without exactly one terminator at the end` +
      `${examples.length ? `: ${examples.join('; ')}` : ''}`);
    say(`hang-ups: ${side.hangups} (${side.early} right after the request), socket errors ${side.errors}; slow readers: ` +
      `${side.slowDone} answers read to the end (${fmt(side.slowBytes / MiB, 0)} MiB in all), ${side.slowOk} with one terminator, ` +
      `${side.slowCut} cut before their end, ${side.slowRefused} refused (not 200)` +
      `${side.slowBad.length ? `; wrong: ${side.slowBad.join('; ')}` : ''}`);
    say(`after the load: ${after!.streamsOpen} streams open, ${after!.fds} fds (idle baseline ${idleFds}), RssAnon ` +
      `${mib(after!.mem.anon)} MiB (idle baseline ${mib(idle.anon)})`);

    const mins = samples.map((r) => r.minute);
    const memory = { unit: 'MiB', scale: MiB, floor: 32 * MiB, share: 0.1 };
    const verdicts = [
      judgePlateau(mins, samples.map((r) => r.mem.anon), { label: 'RssAnon', ...memory }),
      judgePlateau(mins, samples.map((r) => r.mem.rss), { label: 'VmRSS', ...memory }),
      judgePlateau(mins, samples.map((r) => r.fds), { label: 'descriptors', unit: 'fds', scale: 1, floor: 16, share: 0.05 }),
      judgePlateau(mins, samples.map((r) => r.mem.threads), { label: 'threads', unit: 'threads', scale: 1, floor: 4, share: 0 }),
      judgePlateau(mins, samples.map((r) => r.streamsOpen), { label: 'streams open', unit: 'streams', scale: 1, floor: 16, share: 0.1 }),
      judgePlateau(mins, samples.map((r) => r.cannon.p99), { label: 'p99 latency', unit: 'ms', scale: 1, floor: 5, share: 0.5 }),
    ];
    say('');
    for (const v of verdicts) say(v.text);
    // VmRSS includes the mapped shard pages (RssFile); p99 moves with whatever else shares the machine: reported, not judged.
    const leaks = verdicts.filter((v, i) => v.verdict === 'rising' && i !== 1 && i !== 5).map((v) => `${v.text.split(':')[0]} rise`);
    if (after!.streamsOpen > 0) leaks.push(`${after!.streamsOpen} streams still open 10 s after every client left`);
    await s.stop();
    const exit = s.proc.exitCode;
    say(`server at SIGTERM: exit ${exit}`);
    if (exit !== 0) leaks.push(`the server exited ${exit} at SIGTERM`);
    const wrong = bad + side.slowDone - side.slowOk;
    say(`terminators: ${streams + side.slowDone} completed streams, ${wrong} without exactly one terminator at the end: ` +
      `${wrong === 0 ? 'MET' : 'MISSED'}`);
    say(`verdict: ${leaks.length > 0 ? `FAILED: ${leaks.join('; ')}` : 'no clear leak'} (exit status 1 on a clear leak, ` +
      'a wrong terminator or a failed exit; VmRSS and p99 are reported, not judged)');
    failed = leaks.length > 0 || wrong > 0;
  } finally {
    side.stop = true;
    if (cannon !== undefined) cannon.child.kill('SIGKILL');
    if (server !== undefined && server.proc.exitCode === null && server.proc.signalCode === null) await server.stop();
    process.off('SIGINT', stopOnSignal);
    rmSync(scratch, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    const file = path.join(OUT, `soak-serve-${STAMP}.txt`);
    writeFileSync(file, lines.join('\n') + '\n');
    console.log(`log: ${file}`);
  }
  if (failed) process.exitCode = 1;
}

if (process.env['SOAK_CANNON'] !== undefined) {
  cannonChild();
} else {
  main().catch((err) => {
    console.error(err);
    process.exit(1);
  });
}
