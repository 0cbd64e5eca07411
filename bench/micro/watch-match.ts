// Micro-benchmark: matching published shards against open watches
// (src/search/local/local-watch-feed.ts), in one process, timed in CPU time,
// without HTTP, sockets or a receiver: what a published shard costs the
// front end's thread as the number of watches grows, and the longest slice
// it holds the thread for.
//
//   npm run build && node dist/bench/micro/watch-match.js [--watches 0,1,100,1000] [--history 200000] [--shard 5000]
//     [--steps 12] [--patterns simple|counted]
//
// The data: --history names first seen a day ago (one compacted shard),
// then --steps live shards of --shard new names each, first seen now, as a
// live flush publishes them; after every fourth, a compaction (the live
// shards merged into one, as background compaction does) publishes a
// shard of names the watches have seen already. For each count of watches
// (distinct patterns from bench/watch-patterns.ts, one extra watch on the
// first live name of each step so that something is delivered), the same
// steps run on a fresh copy of the data and the feed's matching is timed
// by the process's CPU clock (process.cpuUsage: every thread, the matcher's
// included; the scan and verifier threads are idle meanwhile), slices
// included: the shard set reloads before the clock starts. The first live
// shard, which starts the matcher's thread and compiles its sets, is shown
// apart.

import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { silentLog, type Log } from '../../src/lib/log.js';
import { parseWatchQuery } from '../../src/query/watch-query.js';
import { ShardSet } from '../../src/search/local/shard-set.js';
import { LocalWatchFeed } from '../../src/search/local/local-watch-feed.js';
import type { WatchHandle } from '../../src/search/watch-hub.js';
import { BIN, arg, environment, fmt } from '../common.js';
import { benchNames } from '../names.js';
import { watchPatterns } from '../watch-patterns.js';

const counts = arg('watches', '0,1,100,1000').split(',').map(Number);
const history = Number(arg('history', '200000'));
const shard = Number(arg('shard', '5000'));
const steps = Number(arg('steps', '12'));
const kind = arg('patterns', 'simple') === 'counted' ? 'counted' : 'simple';
/** --verbose: the feed's line for each snapshot it matched. */
const verbose = process.argv.includes('--verbose');
const COMMAND = `node dist/bench/micro/watch-match.js --watches ${counts.join(',')} --history ${history} --shard ${shard} ` +
  `--steps ${steps} --patterns ${kind}`;

const NOW = Math.floor(Date.now() / 1000);

/** The names as a DNSDB NDJSON file, A records first seen at `t`. */
function ndjson(file: string, names: readonly string[], t: number): string {
  writeFileSync(file, names.map((rrname, i) => JSON.stringify({
    rrname, rrtype: 'A', bailiwick: rrname.slice(rrname.indexOf('.') + 1), count: 1,
    rdata: [`10.0.${(i >> 8) & 255}.${i & 255}`], time_first: t, time_last: t,
  })).join('\n') + '\n');
  return file;
}

/**
 * Ingest and merges run in child processes (`rrscan ingest`, and the
 * compactor's mergeShards on the last four shards), so that their garbage
 * is not collected inside the timed matching.
 */
function cli(args: string[]): void {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`rrscan ${args.join(' ')}: ${r.stderr}`);
}

const MERGE_LAST_FOUR = `
const [dir] = process.argv.slice(1);
const { mergeShards, tryCompactionLock } = await import(${JSON.stringify(new URL('../../src/shard/compactor.js', import.meta.url).href)});
const { readManifest } = await import(${JSON.stringify(new URL('../../src/shard/manifest.js', import.meta.url).href)});
const release = tryCompactionLock(dir);
try { await mergeShards(dir, readManifest(dir).shards.slice(-4)); } finally { release(); }`;

function mergeLastFour(dir: string): void {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', MERGE_LAST_FOUR, dir], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`merge: ${r.stderr}`);
}

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

interface Run {
  watches: number;
  /** The first live shard: the matcher thread's start and the sets' first compile. */
  firstMs: number;
  /** CPU ms per live shard and per compaction, the longest slice, tuples offered, objects queued. */
  liveMs: number;
  compactMs: number;
  sliceMs: number;
  /** The matcher thread's ms per live shard. */
  threadMs: number;
  tuples: number;
  objects: number;
}

async function run(template: string, live: readonly string[], watches: number): Promise<Run> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-watch-match-'));
  cpSync(template, dir, { recursive: true });
  const set = new ShardSet(dir, silentLog);
  await set.open();
  let sliceMax = 0;
  const log: Log = {
    ...silentLog,
    debug: (fields) => {
      sliceMax = Math.max(sliceMax, Number((fields as { sliceMaxMs: number }).sliceMaxMs));
      if (verbose) console.log(JSON.stringify(fields));
    },
  };
  const feed = new LocalWatchFeed(set, log, cpuMs);
  let objects = 0;
  const open = (method: 'regex' | 'glob', pattern: string) => {
    const q = parseWatchQuery([method, 'rrnames', pattern], new Map(), NOW - 60);
    const w = feed.plan(q, { limit: 1_000_000, offset: 0, fence: {} }).open({
      ready: () => { objects += (w as WatchHandle).take(Infinity).count; }, fail: (m) => { throw new Error(m); },
    });
  };
  if (watches > 0) open('regex', '^live0\\.');
  for (const p of watchPatterns(Math.max(0, watches - 1), kind)) open(p.method, p.pattern);
  let liveMs = 0;
  let firstMs = 0;
  let compactMs = 0;
  let compactions = 0;
  for (let s = 0; s < live.length; s++) {
    cli(['ingest', '--data', dir, live[s]!]);
    await set.check();
    const t0 = cpuMs();
    feed.published();
    await feed.settled();
    // The first shard starts the matcher's thread and compiles its sets: counted apart.
    if (s === 0) firstMs = cpuMs() - t0;
    else liveMs += cpuMs() - t0;
    if ((s + 1) % 4 === 0) {
      // Background compaction merges the live shards into one: names the watches have seen.
      mergeLastFour(dir);
      await set.check();
      const t1 = cpuMs();
      feed.published();
      await feed.settled();
      compactMs += cpuMs() - t1;
      compactions++;
    }
  }
  const stats = feed.stats();
  await feed.close();
  await set.close();
  rmSync(dir, { recursive: true, force: true });
  return {
    watches, firstMs, liveMs: liveMs / Math.max(1, live.length - 1), compactMs: compactMs / Math.max(1, compactions),
    sliceMs: sliceMax, threadMs: stats.matchMs / (live.length + compactions), tuples: stats.tuples, objects,
  };
}

async function main(): Promise<void> {
  console.log(`# ${COMMAND}`);
  console.log(`# ${environment()}`);
  const template = mkdtempSync(path.join(os.tmpdir(), 'rrscan-watch-match-data-'));
  const files = mkdtempSync(path.join(os.tmpdir(), 'rrscan-watch-match-files-'));
  try {
    const names = benchNames(history + steps * shard, 31);
    const old: string[] = [];
    for (let i = 0; i < history; i++) old.push(names.next().value as string);
    cli(['ingest', '--data', template, ndjson(path.join(files, 'history.ndjson'), old, NOW - 86_400)]);
    const live: string[] = [];
    for (let s = 0; s < steps; s++) {
      const batch = [`live${s}.bench.test.`];
      for (let i = 1; i < shard; i++) batch.push(names.next().value as string);
      live.push(ndjson(path.join(files, `live${s}.ndjson`), batch, NOW));
    }
    console.log(`history: ${history} names first seen a day ago (1 shard); ${steps} live shards of ${shard} new names, ` +
      `a compaction of the last 4 after every fourth; ${kind} patterns`);
    console.log('| watches | CPU ms, first live shard | CPU ms per live shard after | per name (us) | CPU ms per compaction | ' +
      'matcher thread ms per snapshot (wall) | longest front-end slice (CPU ms) | tuples new | objects |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const n of counts) {
      const r = await run(template, live, n);
      console.log(`| ${n} | ${fmt(r.firstMs, 1)} | ${fmt(r.liveMs, 2)} | ${fmt((r.liveMs * 1000) / shard, 2)} | ${fmt(r.compactMs, 2)} | ` +
        `${fmt(r.threadMs, 2)} | ${fmt(r.sliceMs, 2)} | ` +
        `${r.tuples} | ${r.objects} |`);
    }
  } finally {
    rmSync(template, { recursive: true, force: true });
    rmSync(files, { recursive: true, force: true });
  }
}

await main();
