// Soak of live ingest (issue 21): a real `rrscan ingest --listen` (its
// default --compact auto, so background merges run in the same process) fed
// continuously by Frame Streams senders for --minutes, sampled every
// --sample-seconds; at the end a table of the samples, a plateau verdict on
// its memory, descriptors and threads, and a check that what was fed is what
// a server answers.
//
//   npm run build && node dist/bench/soak-ingest.js [--minutes 60] [--senders 2] [--rate 20000] [--new-share 0.05]
//     [--pool-start 100000] [--sample-seconds 60] [--transport unix|tcp] [--flush-seconds N] [--memory-rrsets N]
//     [--compact auto|off] [--check-names 200] [--cache-ranks 200000] [--keep]
//
// The feed. --senders sessions (bench/dnstap-feed.ts FstrmSession, the
// sender live-dnstap.ts and live-query.ts use) share --rate frames/s, each
// pacing itself every 50 ms and writing with backpressure: while the
// receiver pauses senders (its memory budget is full during a flush) a
// sender waits, and falls behind by at most a second's frames, which it then
// drops, as a DNS server's dnstap buffer would; the table shows the rate
// reached. One frame is one AUTH_RESPONSE with one A RRset. A frame is a new
// RRset with probability --new-share and otherwise a repeat of one sent or
// known before, drawn with a heavy tail: rank r = floor(N^u) - 1 (u uniform,
// N the RRsets known so far, rank 0 the oldest), so P(r) ~ 1/r, the shape of
// passive DNS where a few names take most answers. The first --pool-start
// RRsets count as known from the start (what the DNS servers already
// answer about), so early flushes are not all one name. Every flush thus
// mixes repeats (which aggregate into counts) with new RRsets (which keep
// the merged shards growing until the policy seals them). Names are made
// from their index (h<index in base 36>.<two words>.<tld>., the zone as
// dnstap's query_zone), so the bench holds no list of them; the frames of
// the --cache-ranks hottest are kept and rebuilt every 5 minutes (their
// time_last advances in 5-minute steps; building a frame costs ~15 us).
//
// Each sample reads the receiver's /proc/PID/status (VmRSS, RssAnon, RssFile,
// VmHWM, threads), /proc/PID/fd and /proc/PID/maps (mappings of deleted
// files: merge inputs still mapped after their swap would pile up there),
// its --metrics-port counters (frames read, RRsets published, flushes,
// merges), the manifest (shards) and the data directory's bytes; the
// receiver's log (kept in bench/out/soak-ingest-TIME.receiver.log) gives
// the merge in flight and the largest merge so far.
//
// Verdict. RssAnon, descriptors and threads are judged (soak-report.ts).
// RssAnon because it holds what the receiver aggregates (two budgets of
// RRsets at most) and what a merge holds (its output table and FlatBuffer
// on a worker thread of the same process); RssFile is mapped shard pages,
// bounded by the files. Merges are the one growth that is not a leak: their
// inputs grow until shards reach mergeRrsetsMax / fanIn RRsets and are
// sealed, so a RISING RssAnon counts as a leak (exit 1) only when the last
// third ran no larger merge than the middle third (by 10%); otherwise the
// verdict says so and the run needs to be longer. Rising descriptors or
// threads count as a leak (exit 1) whatever the merges. --compact off (not
// the soak itself: a diagnostic) runs the receiver without merges, to tell
// its own memory from theirs.
//
// The end: the senders send STOP (each waits for FINISH, so every frame has
// been read), a last sample, SIGTERM (the receiver publishes what it holds
// and must exit 0); then `rrscan serve` on the directory looks up
// --check-names names drawn from the fed ones (the 10 hottest, the 20 newest
// and random others) and 20 never sent (past the newest): each fed name
// must answer one RRset with its address and a count equal to the frames
// sent for it, each unsent one nothing. The receiver's frame count must
// equal the frames sent, and the manifest's published weight its RRsets
// published.
// Baseline in the same run: the receiver's memory before the first frame.

import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream, mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { mix32, seededRandom } from '../src/demo/prng.js';
import { TLDS, WORDS } from '../src/demo/vocabulary.js';
import { DEFAULT_POLICY } from '../src/shard/compaction-policy.js';
import { readManifest } from '../src/shard/manifest.js';
import { cat } from '../test/unit/ingest/wire-fixtures.js';
import {
  BIN, OUT, arg, cpuSeconds, environment, fdsOf, fmt, memOf, metricSum, scrapeMetrics, startServer, timedGet, type Mem,
} from './common.js';
import { cliAddKey } from './dataset.js';
import { FstrmSession, aFrame, publishedRrsets } from './dnstap-feed.js';
import { PLATEAU_RULE_TEXT, judgePlateau, sampleTable, type Column, type Plateau } from './soak-report.js';

const minutes = Number(arg('minutes', '60'));
const senders = Number(arg('senders', '2'));
const rate = Number(arg('rate', '20000'));
const newShare = Number(arg('new-share', '0.05'));
const poolStart = Number(arg('pool-start', '100000'));
const sampleSeconds = Number(arg('sample-seconds', '60'));
const transport = arg('transport', 'unix');
const flushSeconds = arg('flush-seconds', '');
const memoryRrsets = arg('memory-rrsets', '');
const checkNames = Number(arg('check-names', '200'));
const cacheRanks = Number(arg('cache-ranks', '200000'));
const compact = arg('compact', 'auto');
const keep = process.argv.includes('--keep');
/** The receiver's flags beyond --data, --listen and --metrics-port: its defaults unless given here. */
const RECEIVER_FLAGS = [
  ...(flushSeconds !== '' ? ['--flush-seconds', flushSeconds] : []),
  ...(memoryRrsets !== '' ? ['--memory-rrsets', memoryRrsets] : []),
  ...(compact !== 'auto' ? ['--compact', compact] : []),
];

const COMMAND = `node dist/bench/soak-ingest.js --minutes ${minutes} --senders ${senders} --rate ${rate} --new-share ${newShare} ` +
  `--pool-start ${poolStart} --sample-seconds ${sampleSeconds} --transport ${transport} ${RECEIVER_FLAGS.join(' ')}`.trimEnd() +
  ` --check-names ${checkNames} --cache-ranks ${cacheRanks}${keep ? ' --keep' : ''}`;
const MiB = 2 ** 20;
const TICK_MS = 50;
const FRAME_REFRESH_S = 300;
const STAMP = new Date().toISOString().slice(0, 19).replace(/:/g, '-');

const lines: string[] = [];
const say = (s: string) => { console.log(s); lines.push(s); };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- The feed ------------------------------------------------------------------

const TLD_SUFFIXES = TLDS.map((t) => t.suffix);

/** RRset `i`'s zone and owner name: unique by the index label, the zone shared by about 16 consecutive indices. */
function zoneOf(i: number): string {
  const h = mix32(i >>> 4);
  return `${WORDS[h % WORDS.length]}${WORDS[(h >>> 12) % WORDS.length]}.${TLD_SUFFIXES[(h >>> 24) % TLD_SUFFIXES.length]}.`;
}
const nameOf = (i: number) => `h${i.toString(36)}.${zoneOf(i)}`;
function ipOf(i: number): string {
  const ip = (0x0a000000 + ((i * 2654435761) >>> 8)) >>> 0;
  return `${ip >>> 24}.${(ip >>> 16) & 255}.${(ip >>> 8) & 255}.${ip & 255}`;
}

/** The RRsets known and the frames sent for each; shared by every sender (one event loop). */
class FeedModel {
  /** RRsets known: indices below it may be repeated; the next new one is `known`. */
  known = poolStart;
  /** Frames sent per RRset index (grows by doubling). */
  private sent = new Uint32Array(Math.max(1024, poolStart * 2));
  total = 0;
  private readonly cache: (Uint8Array | undefined)[] = [];
  private readonly cachedAt = new Float64Array(cacheRanks);

  /** The next frame's RRset index: new with probability newShare, else a heavy-tailed repeat. */
  draw(rng: () => number): number {
    if (this.known === 0 || rng() < newShare) return this.known++;
    return Math.min(this.known - 1, Math.floor(Math.exp(rng() * Math.log(this.known))) - 1);
  }

  frame(i: number, nowSec: number): Uint8Array {
    if (i >= this.sent.length) {
      const grown = new Uint32Array(this.sent.length * 2);
      grown.set(this.sent);
      this.sent = grown;
    }
    this.sent[i]!++;
    this.total++;
    if (i >= cacheRanks) return aFrame(nameOf(i), ipOf(i), zoneOf(i), nowSec);
    let f = this.cache[i];
    if (f === undefined || nowSec - this.cachedAt[i]! >= FRAME_REFRESH_S) {
      this.cache[i] = f = aFrame(nameOf(i), ipOf(i), zoneOf(i), nowSec);
      this.cachedAt[i] = nowSec;
    }
    return f;
  }

  sentFor(i: number): number {
    return i < this.sent.length ? this.sent[i]! : 0;
  }
}

/** One sender: paces --rate / --senders frames/s until `stop`, then STOP/FINISH. */
async function sender(address: string, s: number, model: FeedModel, until: { stop: boolean }): Promise<void> {
  const session = await FstrmSession.open(address);
  const rng = seededRandom(1000 + s);
  const perSecond = rate / senders;
  const t0 = performance.now();
  let sent = 0;
  while (!until.stop) {
    const owed = Math.floor((perSecond * (performance.now() - t0)) / 1000) - sent;
    // Behind by more than a second (the receiver paused us): drop the rest, as a DNS server's full buffer does.
    if (owed > perSecond) sent += owed - Math.floor(perSecond);
    const n = Math.min(owed, Math.floor(perSecond));
    if (n > 0) {
      const nowSec = Math.floor(Date.now() / 1000);
      const frames: Uint8Array[] = new Array(n);
      for (let k = 0; k < n; k++) frames[k] = model.frame(model.draw(rng), nowSec);
      await session.write(cat(frames));
      sent += n;
    }
    await sleep(TICK_MS);
  }
  await session.finish();
}

// --- The receiver ------------------------------------------------------------

interface Receiver {
  proc: ChildProcess;
  address: string;
  metricsPort: number;
  /** Merges started, finished (merged, failed or abandoned), the largest started, all from the log. */
  merges: { started: number; ended: number; largest: number; inFlight: number };
  flushes: { last: number; largest: number };
  exited: Promise<number>;
  stdout: () => string;
}

async function startReceiver(data: string, sock: string, logFile: string): Promise<Receiver> {
  const listen = transport === 'tcp' ? 'tcp:127.0.0.1:0' : `unix:${sock}`;
  const args = [BIN, 'ingest', '--data', data, '--listen', listen, '--metrics-port', '0'];
  args.push(...RECEIVER_FLAGS);
  const proc = spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RRSCAN_LOG_LEVEL: 'info' } });
  const log = createWriteStream(logFile);
  const merges = { started: 0, ended: 0, largest: 0, inFlight: 0 };
  const flushes = { last: 0, largest: 0 };
  createInterface({ input: proc.stderr }).on('line', (line) => {
    log.write(line + '\n');
    if (!line.startsWith('{')) return;
    const e = JSON.parse(line) as { msg?: string; rrsetsIn?: number; event?: string; rrsets?: number };
    if (e.msg === 'compaction merging') {
      merges.started++;
      merges.inFlight = e.rrsetsIn ?? 0;
      merges.largest = Math.max(merges.largest, merges.inFlight);
    } else if (e.msg === 'compaction merged' || e.msg?.startsWith('compaction failed') || e.msg?.startsWith('compaction abandoned')) {
      merges.ended++;
      merges.inFlight = 0;
    } else if (e.event === 'flush') {
      flushes.last = e.rrsets ?? 0;
      flushes.largest = Math.max(flushes.largest, flushes.last);
    }
  });
  const exited = new Promise<number>((resolve) => proc.once('exit', (code, signal) => {
    log.end();
    resolve(code ?? (signal ? 128 : -1));
  }));
  let out = '';
  const ready = await new Promise<{ address: string; metricsPort: number }>((resolve, reject) => {
    proc.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const a = /listening on (\S+)/.exec(out);
      const m = /rrscan metrics at http:\/\/[^:]+:(\d+)\/metrics/.exec(out);
      if (a && m) resolve({ address: a[1]!, metricsPort: Number(m[1]) });
    });
    void exited.then((code) => reject(new Error(`ingest --listen exited ${code}: ${out}`)));
  });
  return { proc, ...ready, merges, flushes, exited, stdout: () => out };
}

// --- Samples -----------------------------------------------------------------

interface Sample {
  label: string;
  minute: number;
  sent: number;
  sentPerSec: number;
  known: number;
  read: number;
  published: number;
  flushes: number;
  lastFlush: number;
  merges: number;
  merging: number;
  largestMerge: number;
  shards: number;
  dataBytes: number;
  mem: Mem;
  /** The receiver's CPU over the interval, in % of one core. */
  cpu: number;
  fds: number;
  deletedMaps: number;
}

function dirBytes(dir: string): number {
  let n = 0;
  for (const f of readdirSync(dir)) {
    try {
      n += statSync(path.join(dir, f)).size;
    } catch {
      // Removed between the listing and the stat (a merge's inputs): not there any more.
    }
  }
  return n;
}

/** Mappings of files since deleted: merge inputs unmapped after their swap leave none for long. */
function deletedMappings(pid: number): number {
  try {
    return readFileSync(`/proc/${pid}/maps`, 'utf8').split('\n').filter((l) => l.endsWith('(deleted)')).length;
  } catch {
    return NaN;
  }
}

const mib = (b: number) => fmt(b / MiB, 0);
const k = (n: number) => (n >= 10_000 ? `${fmt(n / 1000, 0)}k` : String(n));
const COLUMNS: Column<Sample>[] = [
  { head: 'min', cell: (s) => s.label },
  { head: 'sent', cell: (s) => k(s.sent) },
  { head: 'sent/s', cell: (s) => (s.label === 'end' ? '-' : fmt(s.sentPerSec, 0)) },
  { head: 'known', cell: (s) => k(s.known) },
  { head: 'read', cell: (s) => k(s.read) },
  { head: 'published', cell: (s) => k(s.published) },
  { head: 'flushes', cell: (s) => String(s.flushes) },
  { head: 'last flush', cell: (s) => k(s.lastFlush) },
  { head: 'merges', cell: (s) => String(s.merges) },
  { head: 'merging', cell: (s) => (s.merging > 0 ? k(s.merging) : '-') },
  { head: 'largest', cell: (s) => k(s.largestMerge) },
  { head: 'shards', cell: (s) => String(s.shards) },
  { head: 'data MiB', cell: (s) => mib(s.dataBytes) },
  { head: 'VmRSS', cell: (s) => mib(s.mem.rss) },
  { head: 'RssAnon', cell: (s) => mib(s.mem.anon) },
  { head: 'RssFile', cell: (s) => mib(s.mem.file) },
  { head: 'VmHWM', cell: (s) => mib(s.mem.hwm) },
  { head: 'cpu %', cell: (s) => fmt(s.cpu, 0) },
  { head: 'fds', cell: (s) => String(s.fds) },
  { head: 'threads', cell: (s) => String(s.mem.threads) },
  { head: 'del maps', cell: (s) => String(s.deletedMaps) },
];

// --- Main --------------------------------------------------------------------

async function main(): Promise<void> {
  say(`command: ${COMMAND}`);
  say(`env: ${environment()}`);
  const p = DEFAULT_POLICY;
  say(`feed: ${senders} sender(s) over ${transport}, ${rate} frames/s in all, ${Math.round(newShare * 100)}% new RRsets, ` +
    `repeats heavy-tailed over the RRsets known (${poolStart} at the start); receiver defaults but --metrics-port 0 ` +
    `${RECEIVER_FLAGS.join(' ')}`.trimEnd() + `; ${compact === 'off' ? 'no merges (a diagnostic: the receiver without them); ' : ''}` +
    `compaction policy fan-in ${p.fanIn}, tier minimum ${p.tierMinRrsets}, merges under ${p.mergeRrsetsMax} RRsets ` +
    `(sealed at ${p.mergeRrsetsMax / p.fanIn})`);
  say(`samples every ${sampleSeconds} s for ${minutes} min; ${PLATEAU_RULE_TEXT}`);
  const scratch = path.join(OUT, `soak-ingest-${process.pid}`);
  const data = path.join(scratch, 'data');
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(data, { recursive: true });
  const logFile = path.join(OUT, `soak-ingest-${STAMP}.receiver.log`);
  let receiver: Receiver | undefined;
  const stopOnSignal = () => {
    receiver?.proc.kill('SIGKILL');
    if (!keep) rmSync(scratch, { recursive: true, force: true });
    process.exit(130);
  };
  process.once('SIGINT', stopOnSignal);
  let failed = false;
  try {
    receiver = await startReceiver(data, path.join(scratch, 'tap.sock'), logFile);
    const r = receiver;
    const pid = r.proc.pid!;
    let died: number | undefined;
    void r.exited.then((code) => { died = code; });
    await sleep(1000);
    const idle = memOf(pid);
    say(`baseline, receiver idle before the first frame: VmRSS ${mib(idle.rss)} MiB, RssAnon ${mib(idle.anon)} MiB, ` +
      `RssFile ${mib(idle.file)} MiB, ${fdsOf(pid)} fds, ${idle.threads} threads`);

    const model = new FeedModel();
    const until = { stop: false };
    const t0 = performance.now();
    const feeding = Promise.all(Array.from({ length: senders }, (_, s) => sender(r.address, s, model, until)));
    let feedError: unknown;
    feeding.catch((err: unknown) => { feedError = err; until.stop = true; });

    const samples: Sample[] = [];
    let lastSent = 0;
    let lastAt = t0;
    let lastCpu = cpuSeconds(pid);
    const benchCpu0 = process.cpuUsage();
    const sample = async (label: string): Promise<Sample> => {
      const now = performance.now();
      const m = await scrapeMetrics(r.metricsPort);
      const cpu = cpuSeconds(pid);
      const s: Sample = {
        label, minute: (now - t0) / 60_000, sent: model.total, sentPerSec: ((model.total - lastSent) * 1000) / (now - lastAt),
        known: model.known,
        read: metricSum(m, 'rrscan_ingest_frames_total'), published: metricSum(m, 'rrscan_ingest_published_rrsets_total'),
        flushes: metricSum(m, 'rrscan_ingest_flushes_total'), lastFlush: r.flushes.last,
        merges: metricSum(m, 'rrscan_compaction_merges_total'), merging: r.merges.inFlight, largestMerge: r.merges.largest,
        shards: readManifest(data).shards.length, dataBytes: dirBytes(data),
        mem: memOf(pid), cpu: (100_000 * (cpu - lastCpu)) / (now - lastAt), fds: fdsOf(pid), deletedMaps: deletedMappings(pid),
      };
      lastCpu = cpu;
      lastSent = model.total;
      lastAt = now;
      return s;
    };
    const count = Math.max(1, Math.round((minutes * 60) / sampleSeconds));
    for (let i = 1; i <= count && died === undefined && !until.stop; i++) {
      await sleep(Math.max(0, t0 + i * sampleSeconds * 1000 - performance.now()));
      const s = await sample(fmt((i * sampleSeconds) / 60, sampleSeconds % 60 === 0 ? 0 : 1));
      samples.push(s);
      console.log(`  ${s.label} min: ${s.sent} frames sent (${fmt(s.sentPerSec, 0)}/s), ${s.published} RRsets published, ` +
        `${s.shards} shards, ${s.merges} merges; VmRSS ${mib(s.mem.rss)} MiB, RssAnon ${mib(s.mem.anon)} MiB, ${s.fds} fds`);
    }
    until.stop = true;
    // A receiver that died would never send FINISH.
    await Promise.race([feeding.catch(() => undefined), r.exited]);
    if (feedError !== undefined) throw feedError;
    if (died !== undefined) throw new Error(`the receiver exited (${died}) during the feed; its log: ${logFile}`);
    // Every sender has had its FINISH: the receiver has read every frame.
    const end = await sample('end');
    const fedSec = (performance.now() - t0) / 1000;
    const benchCpu = process.cpuUsage(benchCpu0);
    r.proc.kill('SIGTERM');
    const code = await r.exited;
    const stopped = /ingest: stopped; .*/.exec(r.stdout())?.[0] ?? '(no stop line)';

    say('');
    for (const l of sampleTable([...samples, end], COLUMNS)) say(l);
    say('(sent, known, read, published: frames and RRsets so far, k = thousands; sent/s over the interval; last flush: its RRsets; ' +
      'merging: RRsets in of the merge running at the sample; largest: largest merge so far; memory in MiB; ' +
      'del maps: mappings of deleted files)');
    say(`fed ${model.total} frames in ${fmt(fedSec, 0)} s (${fmt(model.total / fedSec, 0)} frames/s of ${rate} asked), ` +
      `${model.known - poolStart} new RRsets; the senders (this process) used ` +
      `${fmt((benchCpu.user + benchCpu.system) / 1e4 / fedSec, 0)}% ` +
      `of a core; receiver at SIGTERM: exit ${code}; ${stopped}`);
    say(`receiver peak (VmHWM) ${mib(end.mem.hwm)} MiB; largest flush ${r.flushes.largest} RRsets; ${r.merges.started} merges, ` +
      `largest ${r.merges.largest} RRsets in`);

    // --- Verdicts ---
    const mins = samples.map((s) => s.minute);
    const memory = { unit: 'MiB', scale: MiB, floor: 32 * MiB, share: 0.1 };
    const anon = judgePlateau(mins, samples.map((s) => s.mem.anon), { label: 'RssAnon', ...memory });
    const rss = judgePlateau(mins, samples.map((s) => s.mem.rss), { label: 'VmRSS', ...memory });
    const fds = judgePlateau(mins, samples.map((s) => s.fds), { label: 'descriptors', unit: 'fds', scale: 1, floor: 8, share: 0.05 });
    const threads = judgePlateau(mins, samples.map((s) => s.mem.threads),
      { label: 'threads', unit: 'threads', scale: 1, floor: 4, share: 0 });
    say('');
    for (const v of [anon, rss, fds, threads]) say(v.text);
    const a = Math.floor(samples.length / 3);
    const b = Math.floor((2 * samples.length) / 3);
    const largestBy = (until: number) => samples.slice(0, until).reduce((m, s) => Math.max(m, s.largestMerge), 0);
    const middleLargest = largestBy(b);
    const lastLargest = largestBy(samples.length);
    const mergesGrew = lastLargest > 1.1 * middleLargest;
    say(`largest merge by the end of the middle third ${middleLargest} RRsets in, by the end ${lastLargest}` +
      `${mergesGrew ? ': merges grew in the last third' : ''}; the first ${a} sample(s) are warm-up`);
    const leaks: string[] = [];
    if (anon.verdict === 'rising' && !mergesGrew) leaks.push('RssAnon rises with no larger merge to explain it');
    for (const [name, v] of [['descriptors', fds], ['threads', threads]] as [string, Plateau][]) {
      if (v.verdict === 'rising') leaks.push(`${name} rise`);
    }
    if (anon.verdict === 'rising' && mergesGrew) {
      say('RssAnon rises, and so did the merges (their inputs grow until shards seal at ' +
        `${p.mergeRrsetsMax / p.fanIn} RRsets): not judged a leak; a longer run, past the first sealed shards, shows the plateau`);
    }

    // --- Completeness: serve the directory and look up names that were fed ---
    const check = await completeness(data, model);
    for (const l of check.lines) say(l);
    const weight = publishedRrsets(data);
    const publishedAtStop = Number(/(\d+) RRsets published/.exec(stopped)?.[1] ?? NaN);
    const totalsOk = end.read === model.total && code === 0 && weight === publishedAtStop;
    say(`frames: ${model.total} sent, ${end.read} read by the receiver; RRsets published: ${publishedAtStop} by the receiver ` +
      `(the SIGTERM flush included), ${weight} in the manifest's weights after the merges: ` +
      `${totalsOk ? 'equal' : 'MISMATCH'}`);
    const complete = check.ok && totalsOk;
    say(`completeness: ${complete ? 'MET' : 'MISSED'}`);
    say(`verdict: ${leaks.length > 0 ? `LEAK: ${leaks.join('; ')}` : 'no clear leak'} (exit status 1 only on a clear leak or ` +
      'incomplete data)');
    failed = leaks.length > 0 || !complete;
  } finally {
    if (receiver !== undefined && receiver.proc.exitCode === null && receiver.proc.signalCode === null) {
      receiver.proc.kill('SIGKILL');
      await receiver.exited;
    }
    process.off('SIGINT', stopOnSignal);
    if (!keep) rmSync(scratch, { recursive: true, force: true });
    mkdirSync(OUT, { recursive: true });
    const file = path.join(OUT, `soak-ingest-${STAMP}.txt`);
    writeFileSync(file, lines.join('\n') + '\n');
    console.log(`log: ${file}; receiver log: ${logFile}${keep ? `; data kept in ${data}` : ''}`);
  }
  if (failed) process.exitCode = 1;
}

/** `rrscan serve` on the fed directory: fed names answer their RRset with the count sent, unsent names nothing. */
async function completeness(data: string, model: FeedModel): Promise<{ ok: boolean; lines: string[] }> {
  const rng = seededRandom(77);
  const picks = new Map<number, string>();
  for (let i = 0; i < 10; i++) picks.set(i, 'hottest');
  for (let i = model.known - 1; i >= 0 && picks.size < 30; i--) if (model.sentFor(i) > 0) picks.set(i, 'newest');
  for (let tries = 0; picks.size < Math.max(30, checkNames) && tries < 100 * checkNames; tries++) {
    const i = Math.floor(rng() * model.known);
    if (model.sentFor(i) > 0 && !picks.has(i)) picks.set(i, 'random');
  }
  const unsent: number[] = [];
  for (let i = model.known; unsent.length < 20; i++) unsent.push(i);
  const key = cliAddKey(data);
  const server = await startServer(data);
  const wrong: string[] = [];
  let checked = 0;
  try {
    for (const [i, kind] of [...picks, ...unsent.map((i) => [i, 'unsent'] as const)]) {
      const name = nameOf(i);
      const res = await timedGet(server.port, `/pdns/v2/lookup/rrset/name/${name}/A`, { 'X-API-Key': key });
      const objs = res.body.split('\n').filter((l) => l.startsWith('{"obj"'))
        .map((l) => (JSON.parse(l) as { obj: { count: number; rdata: string[] } }).obj);
      const want = model.sentFor(i);
      const got = objs.length === 0 ? 'nothing' : objs.map((o) => `${o.rdata.join(',')} x${o.count}`).join(' + ');
      const ok = res.status === 200 && (want === 0 ? objs.length === 0
        : objs.length === 1 && objs[0]!.count === want && objs[0]!.rdata.join(',') === ipOf(i));
      checked++;
      if (!ok) wrong.push(`${kind} ${name}: sent ${want}, HTTP ${res.status} ${got}`);
    }
  } finally {
    await server.stop();
  }
  return {
    ok: wrong.length === 0,
    lines: [
      `lookups after SIGTERM (rrscan serve on the directory): ${checked} names (${picks.size} fed: 10 hottest, 20 newest, ` +
      `the rest random; ${unsent.length} never sent), ${wrong.length} wrong`,
      ...wrong.slice(0, 10).map((w) => `  ${w}`),
    ],
  };
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
