// Crash tests (the "Correctness and hardening" issue): `rrscan ingest` and
// `rrscan compact` killed with SIGKILL at random points of their run. After
// each kill the directory must serve exactly what it served before, or, when
// the kill came after the manifest swap, exactly what a clean run publishes;
// the next run of the same command must succeed; and once that run has
// swapped the manifest, nothing the killed run left (unpublished shards,
// temp files, its writer lock) may remain.
//
// The data: two small NDJSON files make the published base (two shards), and
// one big file C (over LIMITS.ndjsonParallelBytesMin, so `--workers 2` cuts
// it into ranges) is the run that gets killed. With `--memory-rrsets` well
// below C's RRsets, one run spills about ten shards, so a kill lands while
// the CLI starts, while it parses, while it writes a shard, between shards,
// around the swap, or after it. Compaction merges base + C (12 shards).
//
// Kill delays are fractions of the run's measured duration (the median of
// the last three clean runs: the load of a shared machine changes within
// minutes), drawn from a seeded PRNG: uniform over the run,
// but every fourth from its last 15 %, so that several kills land around
// the swap and after it, where a run legitimately publishes. The seed and
// every delay are printed; RRSCAN_CRASH_SEED=N replays a sequence. Where
// the machine finishes a run before most kills land, the test fails and
// says the fixture is too small, rather than pass without having killed
// anything mid-run.

import { spawn } from 'node:child_process';
import { copyFileSync, cpSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { Prng } from '../../src/demo/prng.js';
import type { Manifest, ShardEntry } from '../../src/shard/manifest.js';
import { writerOfShardFile } from '../../src/shard/shard-writer.js';
import { BIN, addKey, get, removeDir, startServer, tempPaths, unlistedFiles, type Server } from '../helpers/rrscan.js';

const temp = tempPaths();
/** Servers shutting down (a clean stop takes over a second) and the directories to delete after them. */
const retiring: Promise<void>[] = [];
afterAll(async () => {
  await Promise.all(retiring);
  temp.removeAll();
});

/** Stops a server without waiting for it, then deletes its data directory (made by copyOf). */
function retire(server: Server, dir: string): void {
  retiring.push(server.close().then(() => removeDir(path.dirname(dir))));
}

const SEED = Number(process.env['RRSCAN_CRASH_SEED'] ?? 20_240_611);
const RUNS = 20;
const PARALLEL_RUNS = 2;
/** C's RRsets: about ten shards of MEMORY_RRSETS. */
const C_LINES = 100_000;
const MEMORY_RRSETS = '10000';

// ---- data ----

/** Line i of every fixture file: one RRset per i, so a line in two files is the same RRset seen twice. */
function line(i: number, sensor: string): string {
  const zone = `z${i % 97}.example.`;
  const rr = [
    { rrname: `h${i}.${zone}`, rrtype: 'A', rdata: [`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`] },
    { rrname: `h${i}.${zone}`, rrtype: 'AAAA', rdata: [`2001:db8::${(i >> 16).toString(16)}:${(i & 0xffff).toString(16)}`] },
    { rrname: `mail${i}.${zone}`, rrtype: 'MX', rdata: [`10 mx${i >> 6}.example.net.`] },
    { rrname: `t${i}.${zone}`, rrtype: 'TXT', rdata: [`"v=spf1 include:_spf${i % 13}.example.net ~all"`] },
  ][i % 4]!;
  return JSON.stringify({ count: 1 + (i % 5), time_first: 1_600_000_000 + i, time_last: 1_600_100_000 + i, ...rr,
    bailiwick: zone, sensor_id: sensor });
}

/**
 * NDJSON of the lines in `ranges`. COF's sensor_id (ignored by ingest) pads
 * the lines so that C is big enough for a parallel ingest without more
 * RRsets than the time budget allows.
 */
function writeNdjson(name: string, ranges: [number, number][], sensorChars: number): string {
  const prng = new Prng(SEED);
  const sensors = Array.from({ length: 16 }, () => prng.text(sensorChars, '0123456789abcdef'));
  const out: string[] = [];
  for (const [from, to] of ranges) for (let i = from; i < to; i++) out.push(line(i, sensors[i % 16]!));
  const file = path.join(temp.fresh(), name);
  writeFileSync(file, out.join('\n') + '\n');
  return file;
}

// The fixed queries whose answers are compared: lookups (one name, a
// wildcard, an address range), flexible search on names and on rdata, and
// summaries. Each touches both the base and C.
const QUERIES = [
  '/pdns/v2/lookup/rrset/name/h4.z4.example.',
  '/pdns/v2/lookup/rrset/name/*.z7.example./AAAA',
  '/pdns/v2/lookup/rdata/ip/10.0.16.0,20',
  '/pdns/v2/glob/rrnames/mail*8.z13.example.',
  '/pdns/v2/regex/rdata/mx7.%5C.example',
  '/pdns/v2/summarize/rrset/name/*.z5.example.',
  '/pdns/v2/summarize/rdata/ip/10.0.0.0,16',
];

// ---- processes ----

interface Run {
  /** The process ended by itself (not by our SIGKILL). */
  finished: boolean;
  code: number | null;
  ms: number;
  stdout: string;
  stderr: string;
}

/** `rrscan ARGS` as a child process, killed with SIGKILL after `killAfterMs` when given. */
function rrscan(args: string[], killAfterMs?: number): Promise<Run> {
  const started = performance.now();
  const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  proc.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
  const timer = killAfterMs === undefined ? undefined : setTimeout(() => proc.kill('SIGKILL'), killAfterMs);
  return new Promise((resolve, reject) => {
    proc.once('error', reject);
    proc.once('close', (code, signal) => {
      clearTimeout(timer);
      resolve({ finished: signal === null, code, ms: performance.now() - started, stdout, stderr });
    });
  });
}

/** A run that must succeed, and its duration. */
async function clean(args: string[]): Promise<Run> {
  const r = await rrscan(args);
  expect(r.code, `rrscan ${args.join(' ')}:\n${r.stdout}\n${r.stderr}`).toBe(0);
  return r;
}

function serve(dir: string): Promise<Server> {
  // Info level logs each reload with its generation; keep-alive lines would make bodies differ by timing.
  return startServer(dir, ['--workers', '1', '--keepalive-ms', String(LIMITS.keepAliveMsMax)], { RRSCAN_LOG_LEVEL: 'info' });
}

/** The body of every query in QUERIES, each a complete 200 answer. */
async function answers(server: Server, key: string): Promise<string[]> {
  const out: string[] = [];
  for (const q of QUERIES) {
    const r = await get(server, q, { 'X-API-Key': key });
    expect(r.status, `${q}: ${r.body}`).toBe(200);
    expect(r.body, q).toMatch(/\{"cond":"(succeeded|limited)"[^\n]*\}\n$/);
    out.push(r.body);
  }
  return out;
}

/** Waits until a running server has loaded manifest generation `g` (it logs each reload). */
async function reloaded(server: Server, g: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  const logged = new RegExp(`"generation":${g}\\b[^\\n]*"msg":"shards reloaded"|"msg":"shards reloaded"[^\\n]*"generation":${g}\\b`);
  while (!logged.test(server.stderr())) {
    if (Date.now() > deadline) throw new Error(`server did not reload generation ${g}:\n${server.stderr().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---- the directory ----

const MANIFEST = 'manifest.json';
const readManifestText = (dir: string) => readFileSync(path.join(dir, MANIFEST), 'utf8');
const parseManifest = (text: string) => JSON.parse(text) as Manifest;
function unlisted(dir: string): string[] {
  return unlistedFiles(dir, new Set(parseManifest(readManifestText(dir)).shards.map((s) => s.file)));
}

/** What an entry says about its data; file names and times differ from run to run. */
const content = (s: ShardEntry) => ({ rrsets: s.rrsets, bytes: s.bytes, source: s.source });
const rrsetsOf = (shards: readonly ShardEntry[]) => shards.reduce((n, s) => n + s.rrsets, 0);

/**
 * Where a kill landed, told by what the dead writer left (read before any
 * other writer runs): its writer lock says it got past start-up, a shard temp
 * file that it was writing one, finished shards no manifest lists how far it
 * had come, a manifest temp file that it was swapping.
 */
function landing(dir: string, before: string, run: Run): { where: string; published: boolean; leftBehind: number } {
  if (run.finished) return { where: 'after it finished', published: readManifestText(dir) !== before, leftBehind: 0 };
  const left = unlisted(dir);
  const shards = left.filter((f) => f.endsWith('.rrs')).length;
  const lock = left.some((f) => f.startsWith('.writer-'));
  const where = readManifestText(dir) !== before ? `after the swap${lock ? ', before its cleanup' : ''}`
    : left.some((f) => f.startsWith('.manifest.json.')) ? 'writing the manifest'
      : left.some((f) => f.endsWith('.rrs.tmp')) ? `writing shard ${shards + 1}`
        : shards > 0 ? `after ${shards} shard(s)`
          : lock ? 'before its first shard' : 'starting up';
  return { where, published: readManifestText(dir) !== before, leftBehind: left.length };
}

/** The fraction of the run at which kill `i` of a sequence comes. */
const killFraction = (prng: Prng, i: number) => (i % 4 === 3 ? 0.85 + 0.15 * prng.float() : prng.float());

/**
 * Kills of the runs with two threads, past start-up while the threads work:
 * the first mid-run, the second in the last part, where a compaction's
 * threads write their shards.
 */
const parallelFraction = (prng: Prng, i: number) => (i === 0 ? 0.4 + 0.3 * prng.float() : 0.7 + 0.3 * prng.float());

/** The duration a run of `kind` is expected to take now: the median of the last three clean runs. */
function expectedMs(kind: string): number {
  const recent = durations.get(kind)!.slice(-3).sort((a, b) => a - b);
  return recent[Math.floor(recent.length / 2)]!;
}

interface Outcome {
  where: string;
  published: boolean;
  leftBehind: number;
}

/**
 * Runs `args` on `dir` and kills it `fraction` of the way through a run of
 * `kind` as long as recent clean runs took; says where the kill landed.
 */
async function killRun(label: string, kind: string, dir: string, args: string[],
  fraction: number): Promise<{ before: string; at: Outcome }> {
  const before = readManifestText(dir);
  const expected = expectedMs(kind);
  const delay = Math.round(fraction * expected);
  const run = await rrscan(args, delay);
  if (run.finished) expect(run.code, run.stderr).toBe(0);
  const at = landing(dir, before, run);
  console.log(`${label}: kill at ${delay} ms (${fraction.toFixed(3)} of ${Math.round(expected)} ms): ${at.where}` +
    `${at.leftBehind > 0 ? `, ${at.leftBehind} file(s) left behind` : ''}`);
  return { before, at };
}

/** Fails saying the fixture is too small when too few kills came before the swap. */
function expectMostKilledMidRun(what: string, outcomes: readonly Outcome[]): void {
  const before = outcomes.filter((o) => !o.published).length;
  const tally = new Map<string, number>();
  for (const o of outcomes) {
    const kind = o.where.replace(/\d+/g, 'N');
    tally.set(kind, (tally.get(kind) ?? 0) + 1);
  }
  console.log(`${what}: ${before} of ${outcomes.length} kills before the swap, ${outcomes.length - before} after; ` +
    [...tally].map(([k, n]) => `${n} ${k}`).join(', '));
  expect(before, `${what}: only ${before} of ${outcomes.length} kills landed before the swap: this machine runs the ` +
    'fixture too fast for the kills to land mid-run; make C_LINES bigger').toBeGreaterThanOrEqual(outcomes.length / 2);
  expect(outcomes.some((o) => o.leftBehind > 0), `${what}: no kill left unpublished files behind, so their cleanup ` +
    'went untested; the fixture is too small for this machine').toBe(true);
}

// ---- fixtures shared by every test ----

let key: string;
/** Published base: files A and B, two shards. */
let base: string;
/** The base plus a clean ingest of C, as one thread writes it. */
let withC: string;
let fileC: string;
/** Answers of the base and of base + C. */
let answersBase: string[];
let answersWithC: string[];
/** Durations of clean runs of the killed commands, by command and threads. */
const durations = new Map<string, number[]>();

const ingestArgs = (dir: string, workers: number) =>
  ['ingest', '--data', dir, '--workers', String(workers), '--memory-rrsets', MEMORY_RRSETS, fileC];
const compactArgs = (dir: string, workers: number) => ['compact', '--data', dir, '--workers', String(workers)];

async function timedClean(kind: string, args: string[]): Promise<Run> {
  const r = await clean(args);
  durations.set(kind, [...(durations.get(kind) ?? []), r.ms]);
  return r;
}

/** A copy of a data directory no process is using. */
function copyOf(dir: string): string {
  const to = path.join(temp.fresh(), 'data');
  cpSync(dir, to, { recursive: true });
  return to;
}

async function answersOf(dir: string): Promise<string[]> {
  const server = await serve(dir);
  try {
    return await answers(server, key);
  } finally {
    await server.close();
  }
}

beforeAll(async () => {
  const started = performance.now();
  console.log(`crash.test.ts: seed ${SEED} (RRSCAN_CRASH_SEED=${SEED} replays these kills)`);
  // A and B share 1,000 RRsets, C shares 1,000 with A: answers aggregate across shards.
  const fileA = writeNdjson('a.ndjson', [[0, 3_000]], 8);
  const fileB = writeNdjson('b.ndjson', [[2_000, 5_000]], 8);
  fileC = writeNdjson('c.ndjson', [[0, 1_000], [5_000, 5_000 + C_LINES - 1_000]], 180);
  expect(statSync(fileC).size, 'C must be big enough for a parallel ingest').toBeGreaterThanOrEqual(LIMITS.ndjsonParallelBytesMin);
  base = path.join(temp.fresh(), 'data');
  await clean(['ingest', '--data', base, fileA]);
  await clean(['ingest', '--data', base, fileB]);
  key = addKey(base);
  withC = copyOf(base);
  await timedClean('ingest 1', ingestArgs(withC, 1));
  answersBase = await answersOf(base);
  answersWithC = await answersOf(withC);
  // Every query sees C: an unchanged answer would not tell a published run from an unpublished one.
  for (let i = 0; i < QUERIES.length; i++) expect(answersWithC[i], QUERIES[i]).not.toBe(answersBase[i]);
  console.log(`crash.test.ts: fixtures in ${((performance.now() - started) / 1000).toFixed(1)} s; C is ` +
    `${(statSync(fileC).size / 2 ** 20).toFixed(1)} MiB, ${C_LINES} lines in ${parseManifest(readManifestText(withC)).shards.length - 2} shards`);
}, 180_000);

// ---- ingest ----

/**
 * One killed ingest of C into a copy of the base, and every check after it.
 * `fraction` of the measured duration is when the kill comes.
 */
async function killedIngest(label: string, workers: number, fraction: number): Promise<Outcome> {
  const kind = `ingest ${workers}`;
  const dir = copyOf(base);
  const { before, at } = await killRun(label, kind, dir, ingestArgs(dir, workers), fraction);

  // (a) The manifest is the old one, byte for byte, or the new one, listing the base and all of C.
  const after = readManifestText(dir);
  if (at.published) {
    const was = parseManifest(before);
    const m = parseManifest(after);
    const ref = parseManifest(readManifestText(withC));
    expect(m.generation).toBe(was.generation + 1);
    expect(m.shards.slice(0, was.shards.length)).toEqual(was.shards);
    const added = m.shards.slice(was.shards.length);
    const cleanAdded = ref.shards.slice(was.shards.length);
    // One thread writes the same shards as the clean run; threads cut C elsewhere but write all its RRsets.
    if (workers === 1) expect(added.map(content)).toEqual(cleanAdded.map(content));
    else expect(rrsetsOf(added)).toBe(rrsetsOf(cleanAdded));
  } else {
    expect(after).toBe(before);
  }

  // (b) A server started on the directory answers as before, or as after a clean ingest.
  const server = await serve(dir);
  try {
    expect(await answers(server, key)).toEqual(at.published ? answersWithC : answersBase);
    const generation = parseManifest(after).generation;

    // (d) The next ingest of the same file succeeds: it publishes C, which the running server picks up, or, when
    // the killed run published C, the input ledger skips it. Either way the answers are those of one clean ingest.
    const next = await clean(ingestArgs(dir, workers));
    if (at.published) {
      expect(next.stderr).toMatch(/^rrscan ingest: \S+c\.ndjson: already ingested \(sha256 [0-9a-f]{12}…, shard \S+\.rrs\); skipped\n$/);
      expect(parseManifest(readManifestText(dir)).generation).toBe(generation);
    } else {
      durations.set(kind, [...(durations.get(kind) ?? []), next.ms]);
      await reloaded(server, generation + 1);
    }
    expect(await answers(server, key)).toEqual(answersWithC);
    // (c) That run (its swap, or its clean-up when it skipped C) removed everything the killed run left.
    expect(unlisted(dir)).toEqual([]);
  } finally {
    retire(server, dir);
  }
  return at;
}

describe('rrscan ingest killed with SIGKILL', () => {
  it(`${RUNS} runs on one thread: the data is the old or the new, and the next ingest succeeds and cleans up`, async () => {
    const prng = new Prng(SEED);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < RUNS; i++) outcomes.push(await killedIngest(`ingest run ${i + 1}/${RUNS}`, 1, killFraction(prng, i)));
    expectMostKilledMidRun('ingest --workers 1', outcomes);
  }, 300_000);

  it(`${PARALLEL_RUNS} runs with --workers 2, killed while the threads write`, async () => {
    const prng = new Prng(SEED + 1);
    await timedClean('ingest 2', ingestArgs(copyOf(base), 2));
    for (let i = 0; i < PARALLEL_RUNS; i++) {
      await killedIngest(`ingest --workers 2 run ${i + 1}/${PARALLEL_RUNS}`, 2, parallelFraction(prng, i));
    }
  }, 120_000);
});

// ---- compaction ----

/** One killed compaction of a copy of base + C, and every check after it. */
async function killedCompact(label: string, workers: number, fraction: number, merged: Manifest): Promise<Outcome> {
  const kind = `compact ${workers}`;
  const dir = copyOf(withC);
  const { before, at } = await killRun(label, kind, dir, compactArgs(dir, workers), fraction);

  // (a) The old manifest, or one listing only the merged shards, which hold every RRset.
  const after = readManifestText(dir);
  if (at.published) {
    const m = parseManifest(after);
    const was = parseManifest(before);
    expect(m.generation).toBe(was.generation + 1);
    const old = new Set(was.shards.map((s) => s.file));
    expect(m.shards.filter((s) => old.has(s.file))).toEqual([]);
    if (workers === 1) expect(m.shards.map(content)).toEqual(merged.shards.map(content));
    else expect(rrsetsOf(m.shards)).toBe(rrsetsOf(merged.shards));
  } else {
    expect(after).toBe(before);
  }

  // (b) Compaction never changes an answer: killed or not, published or not.
  const server = await serve(dir);
  try {
    expect(await answers(server, key)).toEqual(answersWithC);
    // (d) The next compaction succeeds; when it has shards to merge it swaps, and the server reloads.
    const generation = parseManifest(after).generation;
    await timedClean(kind, compactArgs(dir, workers));
    const next = parseManifest(readManifestText(dir)).generation;
    if (next !== generation) await reloaded(server, next);
    expect(await answers(server, key)).toEqual(answersWithC);
    // (c) Nothing the killed run left remains.
    expect(unlisted(dir)).toEqual([]);
  } finally {
    retire(server, dir);
  }
  return at;
}

describe('rrscan compact killed with SIGKILL', () => {
  it(`${RUNS} runs on one thread: the shards are the old or the merged ones, the answers never change`, async () => {
    const merged = copyOf(withC);
    await timedClean('compact 1', compactArgs(merged, 1));
    const m = parseManifest(readManifestText(merged));
    expect(m.shards).toHaveLength(1);
    expect(await answersOf(merged)).toEqual(answersWithC);
    const prng = new Prng(SEED + 2);
    const outcomes: Outcome[] = [];
    for (let i = 0; i < RUNS; i++) outcomes.push(await killedCompact(`compact run ${i + 1}/${RUNS}`, 1, killFraction(prng, i), m));
    expectMostKilledMidRun('compact --workers 1', outcomes);
  }, 300_000);

  it(`${PARALLEL_RUNS} runs with --workers 2, killed while the threads merge`, async () => {
    const merged = copyOf(withC);
    await timedClean('compact 2', compactArgs(merged, 2));
    const m = parseManifest(readManifestText(merged));
    expect(m.shards.length, 'two threads write two shards').toBe(2);
    const prng = new Prng(SEED + 3);
    for (let i = 0; i < PARALLEL_RUNS; i++) {
      await killedCompact(`compact --workers 2 run ${i + 1}/${PARALLEL_RUNS}`, 2, parallelFraction(prng, i), m);
    }
  }, 120_000);

  it('killed between its swap and its cleanup: the next compact, with one shard and nothing to merge, deletes what it left', async () => {
    // That window (deleting the merged inputs) lasts milliseconds, too few for
    // a random kill to hit on every run, so the directory such a kill leaves
    // is made from a clean compaction: its inputs put back, unlisted, and its
    // writer lock, unlocked, as a dead writer leaves them.
    const dir = copyOf(withC);
    const inputs = parseManifest(readManifestText(dir)).shards.map((s) => s.file);
    await clean(compactArgs(dir, 1));
    const [merged] = parseManifest(readManifestText(dir)).shards;
    for (const f of inputs) copyFileSync(path.join(withC, f), path.join(dir, f));
    writeFileSync(path.join(dir, `.writer-${writerOfShardFile(merged!.file)!}.lock`), '');
    expect(unlisted(dir)).toHaveLength(inputs.length + 1);
    const r = await clean(compactArgs(dir, 1));
    expect(r.stdout).toMatch(/^compact: 1 shard\(s\)/);
    expect(unlisted(dir)).toEqual([]);
    expect(await answersOf(dir)).toEqual(answersWithC);
  });
});
