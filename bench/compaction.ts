// Background compaction (issue 14): the tiered policy over a simulated month
// of flushes, and the merge throughput and peak memory of a real
// `rrscan compact --auto`.
//
//   npm run build && node dist/bench/compaction.js [--days 30] [--flush-seconds 10] [--shards 4] [--shard-rrsets 250000]
//     [--merge-rrsets-per-sec N]
//
// 1. Simulation (bench/compaction-sim.ts, no files): a flush every
//    --flush-seconds for --days, with the default policy, for several flush
//    sizes and duplicate rates; merges take their input RRsets /
//    --merge-rrsets-per-sec (default: the rate part 2 measures), one at a
//    time. Prints write amplification (RRsets merges wrote / RRsets
//    published), the most rewrites of one record against rewritesMax, the
//    most shards seen right after a flush, the most unsealed shards once no
//    merge was due against unsealedShardsMax, and the sealed shards at the end.
// 2. Real run: --shards shards of --shard-rrsets demo RRsets each (seeds 1..N,
//    so mostly distinct), then `rrscan compact --auto --fan-in N` in a child
//    process: its merge log line (RRsets/s) and the child's peak RSS (VmHWM,
//    its merge thread included).

import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { demoObservations } from '../src/demo/generate.js';
import { ingestObservations } from '../src/ingest/run.js';
import { DEFAULT_POLICY, isSealed, rewritesMax, unsealedShardsMax, type TieredPolicy } from '../src/shard/compaction-policy.js';
import { BIN, OUT, arg, environment, fmt } from './common.js';
import { PolicySim, withDuplicates } from './compaction-sim.js';

const days = Number(arg('days', '30'));
const flushSeconds = Number(arg('flush-seconds', '10'));
const shards = Number(arg('shards', '4'));
const shardRrsets = Number(arg('shard-rrsets', '250000'));

function vmHwmBytes(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

async function realRun(): Promise<number> {
  const dir = path.join(OUT, `compaction-${shards}x${shardRrsets}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (let seed = 1; seed <= shards; seed++) {
    await ingestObservations(demoObservations({ records: shardRrsets, seed }), dir, `bench seed ${seed}`);
  }
  const child = spawn(process.execPath, [BIN, 'compact', '--data', dir, '--auto', '--fan-in', String(shards), '--tier-min-rrsets', '1'],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, RRSCAN_LOG_LEVEL: 'info' } });
  let log = '';
  child.stderr.on('data', (d: Buffer) => { log += d.toString(); });
  const merged = await new Promise<Record<string, number>>((resolve, reject) => {
    const timer = setInterval(() => {
      const line = log.split('\n').find((l) => l.includes('"msg":"compaction merged"'));
      if (line === undefined) return;
      clearInterval(timer);
      resolve(JSON.parse(line) as Record<string, number>);
    }, 50);
    child.once('exit', (code) => reject(new Error(`compact --auto exited ${code}: ${log}`)));
  });
  const peak = vmHwmBytes(child.pid!);
  child.kill('SIGTERM');
  await new Promise((r) => child.once('exit', r));
  console.log(`real merge: ${shards} shards x ${shardRrsets} RRsets -> ${merged['rrsetsOut']} RRsets, ` +
    `${fmt(merged['bytesIn']! / 2 ** 20)} MiB in, ${fmt(merged['bytesOut']! / 2 ** 20)} MiB out, ${fmt(merged['seconds']!, 2)} s, ` +
    `${merged['rrsetsPerSec']} RRsets/s read; peak RSS of the compactor process ${fmt(peak / 2 ** 20)} MiB`);
  return merged['rrsetsPerSec']!;
}

function simulate(p: TieredPolicy, flushRrsets: number, dup: number, ratePerSec: number): void {
  const sim = new PolicySim(p, withDuplicates(dup), ratePerSec);
  const flushes = Math.round((days * 86_400) / flushSeconds);
  const t0 = performance.now();
  for (let i = 0; i < flushes; i++) sim.publish(flushRrsets, flushRrsets * 200, i * flushSeconds);
  sim.settle();
  const sealed = sim.shards.filter((s) => isSealed(s, p)).length;
  console.log(`| ${flushRrsets} | ${Math.round(dup * 100)} % | ${sim.merges} | ${fmt(sim.written / sim.published, 2)} | ` +
    `${sim.worstRewrites} / ${rewritesMax(sim.published, sim.smallest, p)} | ${sim.maxShards} | ` +
    `${sim.maxSettledUnsealed} / ${unsealedShardsMax(sim.published, p)} | ${sealed} | ${sim.shards.length} | ` +
    `${fmt((performance.now() - t0) / 1000, 1)} s |`);
}

console.log(`node dist/bench/compaction.js --days ${days} --flush-seconds ${flushSeconds} --shards ${shards} ` +
  `--shard-rrsets ${shardRrsets}`);
console.log(environment());
const measured = await realRun();
const rate = Number(arg('merge-rrsets-per-sec', String(measured)));
const p = DEFAULT_POLICY;
console.log(`\nsimulated: ${days} days of ${flushSeconds} s flushes (${Math.round((days * 86_400) / flushSeconds)}), fan-in ${p.fanIn}, ` +
  `tier minimum ${p.tierMinRrsets}, merges under ${p.mergeRrsetsMax} RRsets at ${rate} RRsets/s; "dup": the share of a merge's ` +
  'RRsets beyond its largest input that are repeats\n');
console.log('| RRsets/flush | dup | merges | write amp. | worst rewrites / bound | max shards | settled unsealed / bound | ' +
  'sealed at end | shards at end | sim time |');
console.log('|---|---|---|---|---|---|---|---|---|---|');
const SCENARIOS = [[1_000, 0], [1_000, 0.9], [20_000, 0.9], [100_000, 0.9], [100_000, 0.99]] as const;
for (const [flush, dup] of SCENARIOS) simulate(p, flush, dup, rate);
