// Standing watches over a live dnstap feed (issue 25): what 1,000 open
// watches with distinct patterns cost per published shard, how long the
// matching holds the front end's thread, and how long a name takes from the
// frame that carries it (a dig's answer) to the watch that pushes it.
//
//   npm run build && node dist/bench/watch.js [--watches 1000] [--rate 5000] [--seconds 20] [--rounds 2]
//     [--flush-seconds 1] [--patterns simple|counted]
//
// The feed is the live-dnstap bench's (bench/dnstap-feed.ts: AUTH_RESPONSE
// frames, one A RRset each) into a real `rrscan ingest --listen` (unix
// socket, --flush-seconds, background compaction on), at --rate frames a
// second, every name new (bench/names.ts, which the patterns' words come
// from, so that some match) and stamped with the time it is sent. A real
// `rrscan serve` on the same directory holds the watches.
//
// Rounds alternate "no watch open" and "--watches open" for --seconds each,
// the same feed running throughout (the machine is shared: alternating
// spreads its noise over both). Measured per phase:
//   - CPU seconds (user + system, /proc) of serve and of the receiver, per
//     shard published (the receiver's flush log lines in the phase): the
//     watches' cost, and their share of the feed's whole cost;
//   - the matching's own front-end thread time per published snapshot and
//     its longest slice, from serve's debug line for each snapshot matched
//     (local-watch-feed.ts), and the longest wait of a /ping sent every
//     10 ms over a kept-alive connection (the longest hold anyone saw);
//   - dig-to-push: a probe frame with a new name that one extra watch
//     matches, sent once a second; from its write to the object's arrival,
//     and from the receiver's log line for the flush that published it
//     (its time, ms resolution) to the arrival. Target: push within 1 s of
//     the publish, and 1,000 watches at most 10 % more CPU than none.
//
// --patterns counted gives every watch counted repetitions (`w.{0,9}[0-9]{2,}`),
// the case that makes large RE2 sets thrash their DFA (limits.ts
// watchPatternsPerSet).

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { addKey } from '../src/auth/key-admin.js';
import { cat } from '../test/unit/ingest/wire-fixtures.js';
import { BIN, arg, cpuSeconds, environment, fmt, percentile } from './common.js';
import { FstrmSession, aFrame } from './dnstap-feed.js';
import { benchNames } from './names.js';
import { watchPatterns } from './watch-patterns.js';

const watchCount = Number(arg('watches', '1000'));
const rate = Number(arg('rate', '5000'));
const seconds = Number(arg('seconds', '20'));
const rounds = Number(arg('rounds', '2'));
const flushSeconds = arg('flush-seconds', '1');
const patternKind = arg('patterns', 'simple');
const COMMAND = `node dist/bench/watch.js --watches ${watchCount} --rate ${rate} --seconds ${seconds} --rounds ${rounds} ` +
  `--flush-seconds ${flushSeconds} --patterns ${patternKind}`;
const PROBE = 'probe-latency.bench.test.';

/** A watch on a raw socket: its bytes are only counted (and searched for the probe's names). */
class RawWatch {
  objects = 0;
  private tail = '';
  private begun!: Promise<void>;
  onObject: ((line: string) => void) | undefined;

  constructor(private readonly sock: net.Socket) {}

  static async open(port: number, key: string, p: string): Promise<RawWatch> {
    const sock = net.connect(port, '127.0.0.1');
    await new Promise<void>((resolve, reject) => sock.once('connect', resolve).once('error', reject));
    const w = new RawWatch(sock);
    w.begun = new Promise<void>((resolve) => {
      let head = '';
      sock.setEncoding('latin1');
      sock.on('data', (d: string) => {
        if (head !== undefined && !head.includes('{"cond":"begin"}')) {
          head += d;
          if (head.includes('{"cond":"begin"}')) resolve();
          if (!head.startsWith('HTTP/1.1 200')) throw new Error(`watch ${p}: ${head.slice(0, 200)}`);
        }
        w.take(d);
      });
    });
    sock.write(`GET ${p} HTTP/1.1\r\nHost: 127.0.0.1\r\nX-API-Key: ${key}\r\n\r\n`);
    await w.begun;
    return w;
  }

  private take(d: string): void {
    const text = this.tail + d;
    let at = 0;
    for (let i = text.indexOf('{"obj"', at); i >= 0; i = text.indexOf('{"obj"', at)) {
      const end = text.indexOf('\n', i);
      if (end < 0) break;
      this.objects++;
      this.onObject?.(text.slice(i, end));
      at = end + 1;
    }
    this.tail = text.slice(Math.max(at, text.length - 4096));
  }

  close(): void {
    this.sock.destroy();
  }
}

interface Logged {
  at: number;
  line: Record<string, unknown>;
}

/** A child's stderr as parsed pino lines, with their times (epoch ms). */
function logOf(proc: ChildProcess): Logged[] {
  const lines: Logged[] = [];
  let rest = '';
  proc.stderr!.on('data', (d: Buffer) => {
    const text = rest + d.toString();
    const parts = text.split('\n');
    rest = parts.pop()!;
    for (const l of parts) {
      if (!l.startsWith('{')) continue;
      const line = JSON.parse(l) as Record<string, unknown>;
      lines.push({ at: Date.parse(String(line['time'])), line });
    }
  });
  return lines;
}

/** The receiver: `rrscan ingest --listen` on a unix socket; resolves with its address. */
async function receiver(data: string, sock: string): Promise<{ proc: ChildProcess; address: string; log: Logged[] }> {
  const proc = spawn(process.execPath, [BIN, 'ingest', '--data', data, '--listen', `unix:${sock}`, '--flush-seconds', flushSeconds],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  const log = logOf(proc);
  let out = '';
  const address = await new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`receiver exited ${code}`)));
  });
  return { proc, address, log };
}

async function server(data: string): Promise<{ proc: ChildProcess; port: number; log: Logged[] }> {
  // BENCH_SERVE_NODE_ARGS: node flags for serve alone (--cpu-prof --cpu-prof-dir=DIR to see where its time goes).
  const nodeArgs = (process.env['BENCH_SERVE_NODE_ARGS'] ?? '').split(' ').filter((a) => a !== '');
  const proc = spawn(process.execPath, [...nodeArgs, BIN, 'serve', '--data', data, '--port', '0'],
    { env: { ...process.env, RRSCAN_LOG_LEVEL: 'debug' }, stdio: ['ignore', 'pipe', 'pipe'] });
  const log = logOf(proc);
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at https?:\/\/[^:]+:(\d+)\/pdns\/v2\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.once('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return { proc, port, log };
}

/**
 * Pings every 10 ms over one kept-alive connection, from a process of its
 * own (this one's event loop is busy building frames and reading 1,000
 * streams, which would show as waits): each ping's send time and wait.
 */
const PINGER = `
const http = require('node:http');
const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
const one = () => {
  const t0 = performance.now();
  const at = Date.now();
  http.get({ host: '127.0.0.1', port: Number(process.argv[1]), path: '/pdns/v2/ping', agent }, (res) => {
    res.resume();
    res.on('end', () => { process.stdout.write(at + ' ' + (performance.now() - t0) + '\\n'); setTimeout(one, 10); });
  }).on('error', () => setTimeout(one, 10));
};
one();`;

function pinger(port: number): { waits: { at: number; ms: number }[]; stop(): void } {
  const proc = spawn(process.execPath, ['-e', PINGER, String(port)], { stdio: ['ignore', 'pipe', 'inherit'] });
  const waits: { at: number; ms: number }[] = [];
  let rest = '';
  proc.stdout.on('data', (d: Buffer) => {
    const parts = (rest + d.toString()).split('\n');
    rest = parts.pop()!;
    for (const l of parts) {
      const [at, ms] = l.split(' ').map(Number);
      waits.push({ at: at!, ms: ms! });
    }
  });
  return { waits, stop: () => proc.kill() };
}

interface Phase {
  /** Watches open besides the probe's. */
  watches: number;
  serveCpu: number;
  receiverCpu: number;
  flushes: number;
  rrsets: number;
  matched: { busyMs: number; transitions: number; longestSliceMs: number; tuples: number };
  pingMax: number;
  pingP99: number;
  probes: { digToPush: number; publishToPush: number }[];
  delivered: number;
}

async function main(): Promise<void> {
  console.log(`# ${COMMAND}`);
  console.log(`# ${environment()}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-watch-bench-'));
  const data = path.join(dir, 'data');
  let rx: Awaited<ReturnType<typeof receiver>> | undefined;
  let srv: Awaited<ReturnType<typeof server>> | undefined;
  try {
    rx = await receiver(data, path.join(dir, 'tap.sock'));
    const key = await addKey({ kind: 'sqlite', dataDir: data }, { quota: { kind: 'unlimited' }, resultsMax: 1_000_000 });
    srv = await server(data);
    const session = await FstrmSession.open(rx.address);
    const names = benchNames(100_000_000, 25);
    let sent = 0;
    let probeNo = 0;
    /** Each probe's send time, and its place in the feed: the flush whose running total of RRsets reaches it published it. */
    const probes = new Map<string, { at: number; seq: number }>();
    // The feed: --rate new names a second in 10 ticks, each stamped with the second it is sent.
    let feeding = true;
    const feed = (async () => {
      let next = performance.now();
      while (feeding) {
        const n = Math.round(rate / 10);
        const t = Math.floor(Date.now() / 1000);
        const frames: Uint8Array[] = [];
        for (let i = 0; i < n; i++) {
          frames.push(aFrame(names.next().value as string, `10.${(sent >> 16) & 255}.${(sent >> 8) & 255}.${sent & 255}`, '.', t));
          sent++;
        }
        await session.write(cat(frames));
        next += 100;
        await new Promise((r) => setTimeout(r, Math.max(0, next - performance.now())));
      }
    })();
    const sendProbe = async () => {
      const name = `p${probeNo++}.${PROBE}`;
      probes.set(name, { at: performance.now(), seq: ++sent });
      await session.write(aFrame(name, '192.0.2.1', 'test.', Math.floor(Date.now() / 1000)));
      return name;
    };
    // Let the feed and the background compaction get going.
    await new Promise((r) => setTimeout(r, 5_000));

    const phases: Phase[] = [];
    const list = watchPatterns(watchCount, patternKind === 'counted' ? 'counted' : 'simple');
    for (let round = 0; round < rounds; round++) {
      // The probe's watch is one of them: --watches in all, at most LIMITS.watchesMax.
      for (const open of [0, watchCount - 1]) {
        const watches: RawWatch[] = [];
        for (let i = 0; i < open; i++) {
          const p = list[i]!;
          watches.push(await RawWatch.open(srv.port, key, `/pdns/v2/watch/${p.method}/rrnames/${encodeURIComponent(p.pattern)}`));
        }
        const probePath = `/pdns/v2/watch/regex/rrnames/${encodeURIComponent(PROBE.replace(/\./g, '\\.'))}`;
        const probeWatch = await RawWatch.open(srv.port, key, probePath);
        const arrivals: { name: string; at: number; epochMs: number }[] = [];
        probeWatch.onObject = (l) => {
          const name = /"rrname":"([^"]+)"/.exec(l)![1]!;
          arrivals.push({ name, at: performance.now(), epochMs: Date.now() });
        };
        const ping = pinger(srv.port);
        const from = Date.now();
        const serve0 = cpuSeconds(srv.proc.pid!);
        const rx0 = cpuSeconds(rx.proc.pid!);
        const probeTimer = setInterval(() => void sendProbe(), 1_000);
        await new Promise((r) => setTimeout(r, seconds * 1000));
        clearInterval(probeTimer);
        const serveCpu = cpuSeconds(srv.proc.pid!) - serve0;
        const receiverCpu = cpuSeconds(rx.proc.pid!) - rx0;
        const to = Date.now();
        ping.stop();
        // The last probes' objects.
        await new Promise((r) => setTimeout(r, 2_500));
        const flushes = rx.log.filter((l) => l.line['event'] === 'flush' && l.at >= from && l.at < to);
        const matched = srv.log.filter((l) => l.line['msg'] === 'watch: snapshot matched' && l.at >= from && l.at < to)
          .map((l) => l.line as { busyMs: number; tuples: number; wallMs: number });
        const waits = ping.waits.filter((w) => w.at >= from && w.at < to).map((w) => w.ms);
        const flushed = rx.log.filter((l) => l.line['event'] === 'flush')
          .map((l) => ({ at: l.at, total: (l.line['published'] as { rrsets: number }).rrsets }));
        phases.push({
          watches: open, serveCpu, receiverCpu, flushes: flushes.length,
          rrsets: flushes.reduce((n, f) => n + Number(f.line['rrsets']), 0),
          matched: {
            busyMs: matched.reduce((n, m) => n + m.busyMs, 0), transitions: matched.length,
            longestSliceMs: 0, tuples: matched.reduce((n, m) => n + m.tuples, 0),
          },
          pingMax: Math.max(...waits), pingP99: percentile(waits, 99),
          probes: arrivals.map((a) => {
            const probe = probes.get(a.name)!;
            // Every frame is a new RRset, so the flush whose running total first reaches the probe's place published it.
            const published = flushed.find((f) => f.total >= probe.seq)?.at ?? NaN;
            return { digToPush: a.at - probe.at, publishToPush: a.epochMs - published };
          }),
          delivered: watches.reduce((n, w) => n + w.objects, 0),
        });
        for (const w of watches) w.close();
        probeWatch.close();
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
    feeding = false;
    await feed;
    const slices = srv.log.filter((l) => l.line['msg'] === 'watch: snapshot matched');
    console.log(`feed: ${rate} new names/s, flush every ${flushSeconds} s; ${watchCount} watches: ${watchCount - 1} with distinct ` +
      `${patternKind} patterns and the probe's (open in every phase; "none" below is it alone); ${sent} frames sent`);
    console.log('| watches besides the probe\'s | serve CPU s | receiver CPU s | shards | RRsets | serve CPU ms/shard | ' +
      'total CPU ms/shard | ' +
      'match ms/snapshot (thread) | objects pushed | ping max ms | ping p99 ms | dig->push p50/max ms | publish->push p50/max ms |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|---|---|');
    for (const p of phases) {
      const dig = p.probes.map((x) => x.digToPush);
      const pub = p.probes.map((x) => x.publishToPush).filter(Number.isFinite);
      console.log(`| ${p.watches} | ${fmt(p.serveCpu, 2)} | ${fmt(p.receiverCpu, 2)} | ${p.flushes} | ${p.rrsets} | ` +
        `${fmt((p.serveCpu * 1000) / p.flushes)} | ${fmt(((p.serveCpu + p.receiverCpu) * 1000) / p.flushes)} | ` +
        `${fmt(p.matched.busyMs / Math.max(1, p.matched.transitions), 2)} | ${p.delivered} | ${fmt(p.pingMax)} | ${fmt(p.pingP99)} | ` +
        `${fmt(percentile(dig, 50), 0)}/${fmt(Math.max(...dig), 0)} | ${fmt(percentile(pub, 50), 0)}/${fmt(Math.max(...pub), 0)} |`);
    }
    const sum = (w: number, f: (p: Phase) => number) => phases.filter((p) => p.watches === w).reduce((n, p) => n + f(p), 0);
    const per = (w: number, f: (p: Phase) => number) => sum(w, f) / sum(w, (p) => p.flushes);
    const none = per(0, (p) => p.serveCpu + p.receiverCpu);
    const many = per(watchCount - 1, (p) => p.serveCpu + p.receiverCpu);
    const longest = Math.max(0, ...slices.map((l) => Number(l.line['sliceMaxMs'])));
    console.log(`CPU per published shard, serve + receiver: ${fmt(none * 1000)} ms with the probe's watch alone, ` +
      `${fmt(many * 1000)} ms with ${watchCount} (${fmt(((many - none) / none) * 100)} % more); ` +
      `serve alone ${fmt(per(0, (p) => p.serveCpu) * 1000)} -> ` +
      `${fmt(per(watchCount - 1, (p) => p.serveCpu) * 1000)} ms`);
    const matchMs = sum(watchCount - 1, (p) => p.matched.busyMs) / Math.max(1, sum(watchCount - 1, (p) => p.matched.transitions));
    console.log(`matching: ${fmt(matchMs, 2)} ` +
      `ms of front-end thread per snapshot matched; longest slice ${fmt(longest, 2)} ms (LIMITS.watchSliceMs plus one step)`);
    const worst = [...slices].sort((x, y) => Number(y.line['sliceMaxMs']) - Number(x.line['sliceMaxMs'])).slice(0, 5)
      .map((l) => `${String(l.line['sliceMaxMs'])} ms (snapshot of ${String(l.line['added'])} new shards, ${String(l.line['records'])} ` +
        `RRsets, ${String(l.line['tuples'])} tuples, ${String(l.line['watches'])} watches)`);
    console.log(`longest slices: ${worst.join('; ')}`);
  } finally {
    srv?.proc.kill('SIGTERM');
    rx?.proc.kill('SIGTERM');
    await Promise.all([srv, rx].map((p) => p && new Promise((r) => (p.proc.exitCode !== null ? r(undefined) : p.proc.once('exit', r)))));
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
