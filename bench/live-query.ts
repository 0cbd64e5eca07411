// Query latency after a simulated hour of live dnstap feed (issue 14): the
// selective flex class and an exact lookup on the directory that
// `rrscan ingest --listen --compact auto` leaves, at the policy's maximum
// shard count, and after a full `rrscan compact`. Target on the 2-core
// machine: at the maximum shard count within 2x of the compacted latency.
//
//   npm run build && node dist/bench/live-query.js [--minutes 60] [--flush-seconds 10] [--flush-rrsets 20000]
//     [--repeat 0.9] [--speedup 0] [--runs 200]
//
// The feed: a real receiver on a unix socket, one replaying sender, one
// published flush per simulated --flush-seconds, --minutes of them. Each
// flush holds --flush-rrsets distinct A RRsets (names from bench/names.ts),
// a share --repeat of them already published by earlier flushes (uniformly
// chosen; one popular name is in every flush) and the rest new; the first
// flush is all new. One frame per RRset: frames that repeat an RRset within
// one flush only raise its count, so they change neither the shards nor the
// queries and are not resent (an hour at 100,000 frames/s is 360 M frames;
// live-dnstap.js measures the frame rate). The receiver publishes on its
// memory budget (--memory-rrsets = --flush-rrsets, interval flushes off), so
// every flush is exactly one simulated interval. --speedup S paces a flush
// to at least flush-seconds / S real seconds; 0 sends the next flush as soon
// as the last is published, which gives the background merges less time per
// flush than a real feed does, so the feed ends with merges still due. They
// run to the end before the receiver is stopped.
//
// Three states of the same directory, each queried by a fresh `rrscan serve`
// over one kept-alive connection (--runs timed GETs after 5 untimed):
//   settled  as background compaction leaves it once no merge is due;
//   at bound more flushes (receiver with --compact off) until it holds the
//            most shards the policy allows: unsealedShardsMax plus the sealed
//            ones (src/shard/compaction-policy.ts);
//   compacted after `rrscan compact` (full compaction) of the at-bound state.
// The popular name is in every shard, so its lookup reads every shard. The
// at-bound and compacted answers are checked equal.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { addKey } from '../src/auth/key-admin.js';
import { DEFAULT_POLICY, isSealed, nextMerge, unsealedShardsMax } from '../src/shard/compaction-policy.js';
import { readManifest } from '../src/shard/manifest.js';
import { seededRandom } from '../src/demo/prng.js';
import { PHISH_BRANDS } from '../src/demo/vocabulary.js';
import { cat } from '../test/unit/ingest/wire-fixtures.js';
import { BIN, OUT, arg, environment, fmt, percentile, startServer, timedGet } from './common.js';
import { FstrmSession, aFrame, publishedRrsets } from './dnstap-feed.js';
import { benchNames } from './names.js';

const minutes = Number(arg('minutes', '60'));
const flushSeconds = Number(arg('flush-seconds', '10'));
const flushRrsets = Number(arg('flush-rrsets', '20000'));
const repeat = Number(arg('repeat', '0.9'));
const speedup = Number(arg('speedup', '0'));
const runs = Number(arg('runs', '200'));

const COMMAND = `node dist/bench/live-query.js --minutes ${minutes} --flush-seconds ${flushSeconds} --flush-rrsets ${flushRrsets} ` +
  `--repeat ${repeat} --speedup ${speedup} --runs ${runs}`;
const T0 = 1_760_000_000;
const SETTLE_MS = 600_000;
/** Flushes the at-bound state may add (the bound is (k-1) per tier: tens of shards). */
const EXTRA_MAX = 64;

const flushes = Math.round((minutes * 60) / flushSeconds);
/** New RRsets a flush brings; at least one slot repeats, for the popular name. */
const fresh = Math.min(flushRrsets - 1, Math.round(flushRrsets * (1 - repeat)));
const names = [...benchNames(flushRrsets + Math.max(0, flushes - 1 + EXTRA_MAX) * fresh, 11)];

/**
 * flex.ts's selective class, ^(.*\.)?paypal[^.]*\.com\.$, with the brand the
 * feed's names hold: paypal when some name matches, else the brand that
 * matches the fewest (but some) names. Returns the pattern and the names it matches.
 */
function selectivePattern(): { pattern: string; expected: number } {
  const sent = names.slice(0, flushRrsets + Math.max(0, flushes - 1) * fresh);
  const hits = (brand: string) => {
    const re = new RegExp(`^(.*\\.)?${brand}[^.]*\\.com\\.$`);
    return sent.filter((n) => re.test(n)).length;
  };
  const ranked = ['paypal', ...PHISH_BRANDS].map((b) => ({ b, n: hits(b) })).filter((x) => x.n > 0);
  const best = ranked[0]?.b === 'paypal' ? ranked[0] : ranked.sort((x, y) => x.n - y.n)[0];
  if (best === undefined) throw new Error('no name matches any brand\'s selective pattern');
  return { pattern: `^(.*\\.)?${best.b}[^.]*\\.com\\.$`, expected: best.n };
}
const SELECTIVE = selectivePattern();

function ipOf(i: number): string {
  const ip = (0x0a000000 + ((i * 2654435761) >>> 8)) >>> 0;
  return `${ip >>> 24}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
}

/** Flush w's name indices: exactly flushRrsets distinct, index 0 (the popular name) in every one. */
function flushIndices(w: number, rng: () => number): number[] {
  if (w === 0) return Array.from({ length: flushRrsets }, (_, i) => i);
  const known = flushRrsets + (w - 1) * fresh;
  const picked = new Set<number>([0]);
  while (picked.size < flushRrsets - fresh) picked.add(Math.floor(rng() * known));
  return [...picked, ...Array.from({ length: fresh }, (_, i) => known + i)];
}

/**
 * Frames by name index, built once: building is most of the sender's CPU
 * (15 us a frame), which the receiver and its merges need on two cores. A
 * repeat thus carries its first sending's time (time_last does not advance),
 * which changes no shard's size and no query's cost.
 */
const frames = new Map<number, Uint8Array>();

function flushBody(w: number, rng: () => number): Uint8Array {
  return cat(flushIndices(w, rng).map((i) => {
    let frame = frames.get(i);
    if (frame === undefined) {
      const name = names[i]!;
      frames.set(i, (frame = aFrame(name, ipOf(i), name.slice(name.indexOf('.') + 1), T0 + w * flushSeconds)));
    }
    return frame;
  }));
}

interface Receiver {
  proc: ChildProcess;
  address: string;
  log: () => string;
}

async function startReceiver(data: string, sock: string, compact: 'auto' | 'off'): Promise<Receiver> {
  rmSync(sock, { force: true });
  const proc = spawn(process.execPath, [BIN, 'ingest', '--data', data, '--listen', `unix:${sock}`, '--flush-seconds', '3600',
    '--memory-rrsets', String(flushRrsets), '--compact', compact],
  { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RRSCAN_LOG_LEVEL: 'info' } });
  let out = '';
  let err = '';
  proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const address = await new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    proc.once('exit', (code) => reject(new Error(`ingest --listen exited ${code}: ${err}`)));
  });
  return { proc, address, log: () => err };
}

async function stopReceiver(r: Receiver): Promise<void> {
  const exited = new Promise((res) => r.proc.once('exit', res));
  r.proc.kill('SIGTERM');
  await exited;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const count = (log: string, msg: string) => log.split('\n').filter((l) => l.includes(`"msg":"${msg}"`)).length;

/** Sends flushes [from, to) over one session, each published before the next is sent. */
async function feed(r: Receiver, data: string, from: number, to: number, rng: () => number): Promise<number> {
  const session = await FstrmSession.open(r.address);
  let sent = 0;
  for (let w = from; w < to; w++) {
    const t0 = performance.now();
    await session.write(flushBody(w, rng));
    sent += flushRrsets;
    while (publishedRrsets(data) < (w + 1) * flushRrsets) await sleep(5);
    if (speedup > 0) await sleep(Math.max(0, (flushSeconds * 1000) / speedup - (performance.now() - t0)));
  }
  await session.finish();
  return sent;
}

/** Waits until no merge runs and none is due. */
async function settle(r: Receiver, data: string): Promise<void> {
  const until = performance.now() + SETTLE_MS;
  for (;;) {
    const log = r.log();
    const running = count(log, 'compaction merging') - count(log, 'compaction merged') - count(log, 'compaction failed');
    if (running === 0 && nextMerge(readManifest(data).shards, DEFAULT_POLICY) === undefined) return;
    if (performance.now() > until) throw new Error(`compaction still busy after ${SETTLE_MS / 1000} s`);
    await sleep(100);
  }
}

function shape(data: string): { shards: number; sealed: number; bound: number; rrsets: number; published: number; mib: number } {
  const shards = readManifest(data).shards;
  const published = shards.reduce((n, s) => n + (s.rrsetsIngested ?? s.rrsets), 0);
  return {
    shards: shards.length, sealed: shards.filter((s) => isSealed(s, DEFAULT_POLICY)).length,
    bound: unsealedShardsMax(published, DEFAULT_POLICY), rrsets: shards.reduce((n, s) => n + s.rrsets, 0), published,
    mib: shards.reduce((n, s) => n + s.bytes, 0) / 2 ** 20,
  };
}

interface Timing { p50: number; p99: number; results: number; body: string }

async function timeQueries(data: string, key: string): Promise<Record<'selective' | 'exact', Timing>> {
  const server = await startServer(data);
  const urls = {
    selective: `/pdns/v2/regex/rrnames/${encodeURIComponent(SELECTIVE.pattern)}`,
    exact: `/pdns/v2/lookup/rrset/name/${names[0]}`,
  };
  try {
    const out = {} as Record<'selective' | 'exact', Timing>;
    for (const [k, url] of Object.entries(urls) as ['selective' | 'exact', string][]) {
      const times: number[] = [];
      let body = '';
      for (let i = 0; i < runs + 5; i++) {
        const r = await timedGet(server.port, url, { 'X-API-Key': key });
        if (r.status !== 200) throw new Error(`${k}: HTTP ${r.status} ${r.body.slice(0, 200)}`);
        if (i >= 5) times.push(r.ms);
        body = r.body;
      }
      const lines = body.split('\n').filter((l) => l.startsWith('{"obj"')).sort();
      out[k] = { p50: percentile(times, 50), p99: percentile(times, 99), results: lines.length, body: lines.join('\n') };
    }
    return out;
  } finally {
    await server.stop();
  }
}

function peakRssMiB(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

async function main(): Promise<void> {
  console.log(`command: ${COMMAND}`);
  console.log(`env: ${environment()}`);
  const p = DEFAULT_POLICY;
  console.log(`policy: fan-in ${p.fanIn}, tier minimum ${p.tierMinRrsets} RRsets, merges under ${p.mergeRrsetsMax} RRsets`);
  console.log(`selective: ${SELECTIVE.pattern} (${SELECTIVE.expected} of the fed names match); exact: ${names[0]} (in every flush)`);
  const dir = path.join(OUT, `live-query-${minutes}m-${flushRrsets}`);
  rmSync(dir, { recursive: true, force: true });
  const data = path.join(dir, 'data');
  mkdirSync(data, { recursive: true });
  const sock = path.join(dir, 'tap.sock');
  const rng = seededRandom(5);

  const t0 = performance.now();
  const live = await startReceiver(data, sock, 'auto');
  const sentFrames = await feed(live, data, 0, flushes, rng);
  const fed = (performance.now() - t0) / 1000;
  const atFeedEnd = shape(data);
  await settle(live, data);
  const settledSec = (performance.now() - t0) / 1000 - fed;
  const rss = peakRssMiB(live.proc.pid!);
  await stopReceiver(live);
  const log = live.log();
  const merges = count(log, 'compaction merged');
  const flushLines = log.split('\n').filter((l) => l.includes('"event":"flush"')).length;
  const settled = shape(data);
  console.log(`feed: ${flushes} flushes of ${flushRrsets} RRsets (${Math.round(repeat * 100)} % repeats) = ${minutes} simulated ` +
    `minutes; ${sentFrames} frames sent in ${fmt(fed)} s (${fmt((flushes * flushSeconds) / fed)}x real time), ` +
    `${flushRrsets + (flushes - 1) * fresh} distinct RRsets; receiver: ${flushLines} flushes, ${merges} merges, ` +
    `peak RSS ${fmt(rss, 0)} MiB`);
  console.log(`  at the last flush: ${atFeedEnd.shards} shards; merges due ran ${fmt(settledSec)} s more`);

  const key = await addKey({ kind: 'sqlite', dataDir: data }, { quota: { kind: 'unlimited' }, resultsMax: 1_000_000 });
  const describe = (s: ReturnType<typeof shape>) => `${s.shards} shards (${s.sealed} sealed; policy bound ${s.bound} unsealed + ` +
    `sealed = ${s.bound + s.sealed}), ${s.rrsets} RRsets, ${fmt(s.mib)} MiB, ${s.published} published`;
  const rows: [string, string, Record<'selective' | 'exact', Timing>][] = [];
  rows.push(['settled', describe(settled), await timeQueries(data, key)]);
  const found = rows[0]![2].selective.results;
  if (found !== SELECTIVE.expected) throw new Error(`selective: ${found} results, ${SELECTIVE.expected} names fed match`);

  // The worst point: top the settled directory up with tier-0 flushes to the most shards the policy allows.
  let extra = 0;
  const off = await startReceiver(data, sock, 'off');
  for (let s = shape(data); s.shards < s.bound + s.sealed; s = shape(data), extra++) {
    if (extra === EXTRA_MAX) throw new Error(`still under the bound after ${EXTRA_MAX} more flushes`);
    await feed(off, data, flushes + extra, flushes + extra + 1, rng);
  }
  await stopReceiver(off);
  const atBound = shape(data);
  rows.push([`at bound (+${extra} flushes)`, describe(atBound), await timeQueries(data, key)]);

  const c0 = performance.now();
  const full = spawnSync(process.execPath, [BIN, 'compact', '--data', data], { encoding: 'utf8' });
  if (full.status !== 0) throw new Error(`rrscan compact: ${full.stderr}`);
  const compactSec = (performance.now() - c0) / 1000;
  console.log(`full compaction: ${full.stdout.trim()}`);
  rows.push([`compacted (${fmt(compactSec)} s)`, describe(shape(data)), await timeQueries(data, key)]);

  console.log('');
  console.log(`| state | directory | selective p50 / p99 ms (results) | exact p50 / p99 ms (results) |`);
  console.log('|---|---|---|---|');
  for (const [name, d, t] of rows) {
    console.log(`| ${name} | ${d} | ${fmt(t.selective.p50, 2)} / ${fmt(t.selective.p99, 2)} (${t.selective.results}) | ` +
      `${fmt(t.exact.p50, 2)} / ${fmt(t.exact.p99, 2)} (${t.exact.results}) |`);
  }
  const bound = rows[1]![2];
  const compacted = rows[2]![2];
  console.log(`at bound / compacted: ${fmt(atBound.shards / shape(data).shards, 1)}x the shards, ` +
    `${fmt(atBound.rrsets / shape(data).rrsets, 2)}x the RRsets (repeats held by several shards)`);
  for (const k of ['selective', 'exact'] as const) {
    if (bound[k].body !== compacted[k].body) throw new Error(`${k}: the at-bound and compacted answers differ`);
    const ratio = bound[k].p50 / compacted[k].p50;
    console.log(`${k}: at bound / compacted p50 = ${fmt(ratio, 2)}x (p99 ${fmt(bound[k].p99 / compacted[k].p99, 2)}x), ` +
      `target <= 2x ${ratio <= 2 ? 'MET' : 'MISSED'}; answers equal`);
  }
  rmSync(dir, { recursive: true, force: true });
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
