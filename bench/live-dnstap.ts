// `rrscan ingest --listen` throughput: N senders replay pre-built dnstap
// frames (AUTH_RESPONSE, one A RRset each, distinct names) over a unix
// socket or TCP into a real receiver process; measures frames/s read (first
// byte sent to the last sender's FINISH), frames/s published (to the
// manifest listing every RRset), the receiver's peak RSS and its longest
// flush.
//
//   npm run build && node dist/bench/live-dnstap.js [--senders 1] [--frames 200000] [--transport unix|tcp]
//     [--flush-seconds 1] [--memory-rrsets 200000]
//
// --frames is per sender. Baseline in the same run: the same frames written
// to a file and read by `rrscan ingest FILE` (the file reader shares the
// frame decoding).

import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { cat, control } from '../test/unit/ingest/wire-fixtures.js';
import { DNSTAP, FstrmSession, aFrame, publishedRrsets } from './dnstap-feed.js';
import { BIN, arg, environment, fmt } from './common.js';

const fmt0 = (n: number): string => fmt(n, 0);

const senders = Number(arg('senders', '1'));
const frames = Number(arg('frames', '200000'));
const transport = arg('transport', 'unix');
const flushSeconds = arg('flush-seconds', '1');
const memoryRrsets = arg('memory-rrsets', '200000');

const T = 1_760_000_000;

function stream(sender: number): Buffer {
  const parts: Uint8Array[] = [];
  for (let i = 0; i < frames; i++) {
    const name = `h${i}.s${sender}.bench.test.`;
    parts.push(aFrame(name, `10.${sender & 255}.${(i >> 8) & 255}.${i & 255}`, 'bench.test.', T));
  }
  return Buffer.from(cat(parts));
}

/** The whole session: READY, ACCEPT, START, the frames, STOP; resolves at FINISH. */
async function send(address: string, body: Buffer): Promise<void> {
  const session = await FstrmSession.open(address);
  await session.write(body);
  await session.finish();
}

function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function main(): Promise<void> {
  console.log(`# node dist/bench/live-dnstap.js --senders ${senders} --frames ${frames} --transport ${transport} ` +
    `--flush-seconds ${flushSeconds} --memory-rrsets ${memoryRrsets}`);
  console.log(`# ${environment()}`);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-live-bench-'));
  try {
    const bodies = Array.from({ length: senders }, (_, s) => stream(s));
    const total = senders * frames;
    const bytes = bodies.reduce((n, b) => n + b.length, 0);

    // Baseline: the same frames as one file through the file reader.
    const file = path.join(dir, 'all.fstrm');
    writeFileSync(file, Buffer.concat([control(2, DNSTAP), ...bodies, control(3)]));
    const b0 = performance.now();
    const base = spawnSync(process.execPath, [BIN, 'ingest', '--data', path.join(dir, 'file-data'), '--memory-rrsets', memoryRrsets, file],
      { encoding: 'utf8' });
    if (base.status !== 0) throw new Error(base.stderr);
    const baseSec = (performance.now() - b0) / 1000;

    const data = path.join(dir, 'data');
    const listen = transport === 'tcp' ? 'tcp:127.0.0.1:0' : `unix:${path.join(dir, 'tap.sock')}`;
    const proc = spawn(process.execPath, [BIN, 'ingest', '--data', data, '--listen', listen, '--flush-seconds', flushSeconds,
      '--memory-rrsets', memoryRrsets], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    const address = await new Promise<string>((resolve) => proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    }));
    const t0 = performance.now();
    await Promise.all(bodies.map((b) => send(address, b)));
    const readSec = (performance.now() - t0) / 1000;
    while (publishedRrsets(data) < total) await new Promise((r) => setTimeout(r, 20));
    const publishedSec = (performance.now() - t0) / 1000;
    const rss = peakRssMiB(proc.pid!);
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('exit', r));
    const flushes = err.split('\n').filter((l) => l.includes('"event":"flush"'))
      .map((l) => JSON.parse(l) as { ms: number; blockedMs: number; rrsets: number });
    const longest = flushes.reduce((m, f) => (f.blockedMs > m.blockedMs ? f : m), { ms: 0, blockedMs: 0, rrsets: 0 });

    console.log(`${senders} sender(s) x ${fmt0(frames)} frames over ${transport} (${(bytes / 2 ** 20).toFixed(1)} MiB):`);
    console.log(`  read:      ${fmt0(Math.round(total / readSec))} frames/s (${readSec.toFixed(2)} s to the last FINISH)`);
    console.log(`  published: ${fmt0(Math.round(total / publishedSec))} frames/s (${publishedSec.toFixed(2)} s until the manifest ` +
      `lists all ${fmt0(total)} RRsets, ${flushes.length} flushes)`);
    console.log(`  longest flush: held the receiving thread ${longest.blockedMs} ms (${longest.ms} ms to published) for ` +
      `${fmt0(longest.rrsets)} RRsets; receiver peak RSS ${rss.toFixed(0)} MiB`);
    console.log(`  baseline: rrscan ingest FILE, same frames: ${fmt0(Math.round(total / baseSec))} frames/s (${baseSec.toFixed(2)} s, ` +
      'process start included)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
