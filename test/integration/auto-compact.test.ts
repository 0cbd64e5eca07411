// Background compaction (`rrscan compact --auto`, src/shard/auto-compactor.ts)
// with real processes: a publisher process flushing a small shard every
// PUBLISH_MS (the ingest code `rrscan ingest` runs, without a process start
// per flush, as the live receiver will publish), the compactor in its own
// process, and `rrscan serve` answering lookups the whole time.
//
// - While 200 flushes are published, lookups of names whose flushes were
//   all published a few seconds earlier answer exactly (aggregated over the
//   two flushes that hold each name: never a record twice, never a miss); once the
//   compactor has nothing left to merge, the shard count is within the
//   policy's bound and every answer equals that of one ingest of all the
//   flushes.
// - SIGTERM during a merge: exit 0, the merge abandoned, the manifest byte
//   for byte as before, nothing left behind, the same answers.
// - SIGKILL during a merge: the manifest as before and the same answers; the
//   next `compact --auto` merges and its swap deletes what the killed one left.
// - `rrscan compact` during a background merge waits for it (one compaction
//   a directory) instead of racing it.

import { spawn, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { DEFAULT_POLICY, isSealed, nextMerge, unsealedShardsMax, type TieredPolicy } from '../../src/shard/compaction-policy.js';
import type { Manifest } from '../../src/shard/manifest.js';
import {
  BIN, REPO, addKey, answer, begin, body, cli, get, ok, startServer, tempPaths, unlistedFiles, until, type Server,
} from '../helpers/rrscan.js';

const temp = tempPaths();
const stopping: Promise<void>[] = [];
afterAll(async () => {
  await Promise.all(stopping);
  temp.removeAll();
});

const FLUSHES = 200;
/** Names per flush; each name is in two consecutive flushes (STEP apart). */
const PER_FLUSH = 40;
const STEP = 20;
const PUBLISH_MS = 25;
const TIER_MIN = 50;
const POLICY: TieredPolicy = { ...DEFAULT_POLICY, tierMinRrsets: TIER_MIN };
const T0 = 1_700_000_000;
const ZONE = 'auto.example.';

const rrname = (n: number) => `h${n}.z${n % 7}.${ZONE}`;
const ip = (n: number) => `10.9.${(n >> 8) & 255}.${n & 255}`;
const flushRecord = (n: number, f: number) =>
  ({ count: 1, time_first: T0 + f * 10, time_last: T0 + f * 10 + 5, rrname: rrname(n), rrtype: 'A', bailiwick: ZONE, rdata: [ip(n)] });
const namesOf = (f: number) => Array.from({ length: PER_FLUSH }, (_, i) => f * STEP + i);
/** The flushes holding name n. */
const flushesOf = (n: number) => [Math.floor(n / STEP) - 1, Math.floor(n / STEP)].filter((f) => f >= 0 && f < FLUSHES);
/** The exact lookup body of name n once all its flushes are published. */
function expectedBody(n: number): string {
  const fs = flushesOf(n);
  return body(begin, { obj: { count: fs.length, time_first: T0 + fs[0]! * 10, time_last: T0 + fs.at(-1)! * 10 + 5, rrname: rrname(n),
    rrtype: 'A', bailiwick: ZONE, rdata: [ip(n)] } }, ok);
}
const lookup = (n: number) => `/pdns/v2/lookup/rrset/name/${rrname(n)}/A`;
const NAMES = (FLUSHES - 1) * STEP + PER_FLUSH;

const readManifestAt = (dir: string): Manifest => (existsSync(path.join(dir, 'manifest.json'))
  ? JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest : { version: 1, generation: 0, shards: [] });
/** Files of `dir` that are neither listed shards nor a data directory's fixed files. */
const unlisted = (dir: string): string[] => unlistedFiles(dir, new Set(readManifestAt(dir).shards.map((s) => s.file)));

interface Proc {
  proc: ChildProcess;
  stdout(): string;
  stderr(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function run(file: string, args: string[], env: Record<string, string> = {}): Proc {
  const proc = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  proc.stdout.on('data', (d: Buffer) => { out += d.toString(); });
  proc.stderr.on('data', (d: Buffer) => { err += d.toString(); });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => {
    proc.once('close', (code, signal) => resolve({ code, signal }));
  });
  return { proc, stdout: () => out, stderr: () => err, exited };
}

/** `rrscan compact --auto` on `dir`, logging at info. */
const autoCompact = (dir: string, extra: string[] = []) =>
  run(process.execPath, [BIN, 'compact', '--data', dir, '--auto', ...extra], { RRSCAN_LOG_LEVEL: 'info' });

/** The compactor's log lines with message `msg`. */
const logged = (p: Proc, msg: string) => p.stderr().split('\n').filter((l) => l.includes(`"msg":"${msg}"`))
  .map((l) => JSON.parse(l) as Record<string, unknown>);

async function stop(p: Proc, signal: NodeJS.Signals = 'SIGTERM') {
  if (p.proc.exitCode === null && p.proc.signalCode === null) p.proc.kill(signal);
  return p.exited;
}

describe('compact --auto beside a publisher and a server', () => {
  const files: string[] = [];
  let dir: string;
  let key: string;

  beforeAll(() => {
    const src = temp.fresh();
    for (let f = 0; f < FLUSHES; f++) {
      const file = path.join(src, `flush-${f}.ndjson`);
      writeFileSync(file, namesOf(f).map((n) => JSON.stringify(flushRecord(n, f))).join('\n') + '\n');
      files.push(file);
    }
    dir = path.join(temp.fresh(), 'data');
    key = addKey(dir);
  });

  it(`${FLUSHES} flushes: exact answers during and after, shard count within the policy's bound`, async () => {
    const server = await startServer(dir, ['--workers', '1', '--keepalive-ms', String(LIMITS.keepAliveMsMax)]);
    const compactor = autoCompact(dir, ['--tier-min-rrsets', String(TIER_MIN)]);
    // The publisher: ingestFiles (what `rrscan ingest FILE` runs), one flush file per run, PUBLISH_MS apart.
    const script = `const { ingestFiles } = await import(${JSON.stringify(path.join(REPO, 'dist/src/ingest/run.js'))});
      const files = JSON.parse(process.argv[1]);
      for (let i = 0; i < files.length; i++) {
        await ingestFiles([files[i]], { dataDir: process.argv[2], format: 'ndjson', maxErrors: 0 });
        console.log('published ' + i + ' ' + Date.now());
        await new Promise((r) => setTimeout(r, ${PUBLISH_MS}));
      }`;
    const publisher = run(process.execPath, ['--input-type=module', '-e', script, JSON.stringify(files), dir]);
    const publishedAt = () => [...publisher.stdout().matchAll(/^published (\d+) (\d+)$/gm)].map((m) => Number(m[2]));
    try {
      let maxShards = 0;
      let checked = 0;
      let i = 0;
      while (publisher.proc.exitCode === null) {
        maxShards = Math.max(maxShards, readManifestAt(dir).shards.length);
        // Names whose flushes were all published over 2.5 s ago: the server has reloaded them (it polls every second).
        const times = publishedAt();
        const settled = times.filter((t) => t < Date.now() - 2_500).length;
        if (settled >= 2) {
          const n = (i++ * 7919) % ((settled - 1) * STEP);
          const r = await get(server, lookup(n), { 'X-API-Key': key });
          expect(r.status).toBe(200);
          expect(r.body, rrname(n)).toBe(expectedBody(n));
          checked++;
        }
        await new Promise((r) => setTimeout(r, 25));
      }
      expect((await publisher.exited).code, publisher.stderr()).toBe(0);
      expect(publishedAt()).toHaveLength(FLUSHES);
      // Settled: no merge due (a merge in flight keeps its inputs listed, so one would be).
      await until('the compactor to finish merging', () => nextMerge(readManifestAt(dir).shards, POLICY) === undefined, 30_000);
      const m = readManifestAt(dir);
      const published = FLUSHES * PER_FLUSH;
      const bound = unsealedShardsMax(published, POLICY);
      const merges = logged(compactor, 'compaction merged');
      console.log(`auto-compact: ${FLUSHES} flushes, ${merges.length} merges, ${checked} lookups checked during the run; ` +
        `shards at most ${maxShards} during, ${m.shards.length} settled (bound ${bound})`);
      expect(m.shards.filter((s) => isSealed(s, POLICY))).toEqual([]);
      expect(m.shards.length).toBeLessThanOrEqual(bound);
      expect(m.shards.reduce((n, s) => n + (s.rrsetsIngested ?? s.rrsets), 0)).toBe(published);
      expect(checked).toBeGreaterThan(20);
      // During the run merges outlast flushes, which wait (the bound is for a settled directory), but the
      // compactor keeps up: without it there would be one shard a flush (measured here: 23 to 33 at most).
      expect(maxShards).toBeLessThan(FLUSHES / 2);
      expect(merges.length).toBeGreaterThan(FLUSHES / POLICY.fanIn);
      // Each merge line names its inputs, outputs, records, bytes and seconds.
      expect(Object.keys(merges[0]!)).toEqual(expect.arrayContaining(['tier', 'inputs', 'outputs', 'rrsetsIn', 'rrsetsOut', 'bytesIn',
        'bytesOut', 'seconds', 'shards']));
      // Every name, after: the exact aggregate of its flushes.
      await new Promise((r) => setTimeout(r, 2 * LIMITS.manifestPollMs));
      for (let n = 0; n < NAMES; n += 3) {
        const r = await get(server, lookup(n), { 'X-API-Key': key });
        expect(r.body, rrname(n)).toBe(expectedBody(n));
      }
      // Wildcard, flexible and summary answers: those of one ingest of every flush.
      const ref = path.join(temp.fresh(), 'data');
      const refKey = addKey(ref);
      const ing = cli(['ingest', '--data', ref, ...files]);
      expect(ing.code, ing.stderr).toBe(0);
      const refServer = await startServer(ref, ['--workers', '1', '--keepalive-ms', String(LIMITS.keepAliveMsMax)]);
      try {
        for (const q of [`/pdns/v2/lookup/rrset/name/*.z3.${ZONE}/A`, '/pdns/v2/regex/rrnames/h1[0-9]*%5C.z2%5C.', '/pdns/v2/lookup/rdata/ip/10.9.4.0,23',
          `/pdns/v2/summarize/rrset/name/*.z5.${ZONE}`]) {
          const [a, b] = await Promise.all([get(server, q, { 'X-API-Key': key }), get(refServer, q, { 'X-API-Key': refKey })]);
          expect(a.status, q).toBe(200);
          expect(answer(a), q).toBe(answer(b));
          expect(a.body.split('\n').length, q).toBeGreaterThan(3);
        }
      } finally {
        await refServer.close();
      }
      const exit = await stop(compactor);
      expect(exit, compactor.stderr()).toEqual({ code: 0, signal: null });
      expect(logged(compactor, 'background compaction stopped')).toHaveLength(1);
      expect(unlisted(dir)).toEqual([]);
    } finally {
      publisher.proc.kill('SIGKILL');
      compactor.proc.kill('SIGKILL');
      stopping.push(server.close());
    }
  }, 120_000);
});

describe('compact --auto stopped during a merge', () => {
  /** Two shards of 60,000 RRsets (5,000 shared): one merge of fan-in 2 lasting a second or more. */
  let base: string;
  let key: string;
  const QUERIES = [
    '/pdns/v2/lookup/rrset/name/h10.z10.kill.example./A',
    '/pdns/v2/lookup/rrset/name/h57000.z57000.kill.example./A',
    '/pdns/v2/lookup/rrset/name/*.z3.kill.example./A',
    '/pdns/v2/summarize/rdata/ip/10.0.0.0,16',
  ].map((q) => q.replace(/z(\d+)\./, (_, n: string) => `z${Number(n) % 97}.`));
  const ARGS = ['--fan-in', '2', '--tier-min-rrsets', '1000'];

  beforeAll(() => {
    const src = temp.fresh();
    base = path.join(temp.fresh(), 'data');
    for (const [i, from] of [0, 55_000].entries()) {
      const lines: string[] = [];
      for (let n = from; n < from + 60_000; n++) {
        lines.push(JSON.stringify({ count: 1 + i, time_first: T0 + i, time_last: T0 + 100 + i, rrname: `h${n}.z${n % 97}.kill.example.`,
          rrtype: 'A', bailiwick: 'kill.example.', rdata: [`10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`] }));
      }
      const file = path.join(src, `part${i}.ndjson`);
      writeFileSync(file, lines.join('\n') + '\n');
      const r = cli(['ingest', '--data', base, file]);
      expect(r.code, r.stderr).toBe(0);
    }
    key = addKey(base);
  }, 60_000);

  async function answers(server: Server): Promise<string[]> {
    const out: string[] = [];
    for (const q of QUERIES) {
      const r = await get(server, q, { 'X-API-Key': key });
      expect(r.status, q).toBe(200);
      out.push(r.body);
    }
    return out;
  }

  /** A copy of the base, a server on it, and a compactor signalled 300 ms into its merge. */
  async function signalledMidMerge(signal: NodeJS.Signals) {
    const dir = path.join(temp.fresh(), 'data');
    cpSync(base, dir, { recursive: true });
    const before = readFileSync(path.join(dir, 'manifest.json'), 'utf8');
    const server = await startServer(dir, ['--workers', '1', '--keepalive-ms', String(LIMITS.keepAliveMsMax)]);
    stopping.push(new Promise((r) => server.proc.once('exit', () => r())));
    const expected = await answers(server);
    const compactor = autoCompact(dir, ARGS);
    await until('the merge to start', () => logged(compactor, 'compaction merging').length > 0, 30_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(logged(compactor, 'compaction merged'), 'the merge ended before the signal: make the shards bigger').toEqual([]);
    const exit = await stop(compactor, signal);
    return { dir, before, server, expected, compactor, exit };
  }

  it('SIGTERM: exit 0, the merge abandoned, the manifest as it was, nothing left behind, the same answers', async () => {
    const { dir, before, server, expected, compactor, exit } = await signalledMidMerge('SIGTERM');
    try {
      expect(exit, compactor.stderr()).toEqual({ code: 0, signal: null });
      expect(logged(compactor, 'compaction abandoned at stop; its inputs stay live')).toHaveLength(1);
      expect(logged(compactor, 'compaction merged')).toEqual([]);
      expect(readFileSync(path.join(dir, 'manifest.json'), 'utf8')).toBe(before);
      expect(unlisted(dir)).toEqual([]);
      expect(await answers(server)).toEqual(expected);
    } finally {
      await server.close();
    }
  }, 60_000);

  it('a plain `rrscan compact` started during a background merge waits for it, then finds nothing to merge', async () => {
    const dir = path.join(temp.fresh(), 'data');
    cpSync(base, dir, { recursive: true });
    const compactor = autoCompact(dir, ARGS);
    try {
      await until('the merge to start', () => logged(compactor, 'compaction merging').length > 0, 30_000);
      const full = run(process.execPath, [BIN, 'compact', '--data', dir]);
      const { code } = await full.exited;
      expect(code, full.stderr()).toBe(0);
      // It ran after the merge's swap: one shard, nothing for it to merge, no conflict.
      expect(logged(compactor, 'compaction merged')).toHaveLength(1);
      expect(full.stdout()).toMatch(/^compact: 1 shard\(s\), 115000 RRsets in -> 1 shard\(s\)/);
      expect(readManifestAt(dir).shards).toHaveLength(1);
    } finally {
      await stop(compactor);
    }
  }, 60_000);

  it('SIGKILL: the manifest as it was, the same answers; the next run merges and cleans up', async () => {
    const { dir, before, server, expected, exit } = await signalledMidMerge('SIGKILL');
    try {
      expect(exit.signal).toBe('SIGKILL');
      expect(readFileSync(path.join(dir, 'manifest.json'), 'utf8')).toBe(before);
      expect(await answers(server)).toEqual(expected);
      const next = autoCompact(dir, ARGS);
      await until('the next merge', () => logged(next, 'compaction merged').length > 0, 30_000);
      expect(await stop(next)).toEqual({ code: 0, signal: null });
      const m = readManifestAt(dir);
      expect(m.shards).toHaveLength(1);
      expect(m.shards[0]!.rrsetsIngested).toBe(120_000);
      expect(m.shards[0]!.rrsets).toBe(115_000);
      expect(unlisted(dir)).toEqual([]);
      await new Promise((r) => setTimeout(r, 2 * LIMITS.manifestPollMs));
      expect(await answers(server)).toEqual(expected);
    } finally {
      await server.close();
    }
  }, 60_000);
});
