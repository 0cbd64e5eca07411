// Micro-benchmark: what the request path's metrics cost per request.
//
// Runs, per simulated exact lookup, exactly what the front end adds for its
// metrics (src/server/serving-stats.ts): the status count and first-byte
// bucket, the terminator bucket, one performance.now(), the answer's one
// chunk's length, and the stage stores; beside the same loop without
// them, in the same run. Prints nanoseconds per request and their share of
// the server's CPU time per exact lookup (--cpu-us, default 12: the median
// "us CPU/request" of `node dist/bench/metrics.js` here). Unlike req/s under
// wrk, this does not move with whatever else the machine runs.
//
// Run: npm run build && node dist/bench/micro/metrics-hot-path.js [--cpu-us 12]

import { arg, fmt } from '../common.js';
import { ServingStats, type FamilyStats } from '../../src/server/serving-stats.js';

const cpuUs = Number(arg('cpu-us', '12'));
const N = 2_000_000;
const ROUNDS = 7;
// A real exact-lookup answer's size (bench/lookup.ts's name): one chunk.
const CHUNK = '{"cond":"begin"}\n{"obj":{"count":12,"time_first":1600000000,"time_last":1650000000,"rrname":"uat.dratekca.it.",' +
  '"rrtype":"A","bailiwick":"dratekca.it.","rdata":["10.1.2.3"]}}\n{"cond":"succeeded"}\n';

interface Req { family: FamilyStats; stage: string; started: number }

function baseline(reqs: Req[], sink: { n: number }): void {
  for (let i = 0; i < N; i++) {
    const x = reqs[i & 1023]!;
    sink.n += x.started;
  }
}

function instrumented(reqs: Req[], stats: ServingStats, sink: { n: number }): void {
  for (let i = 0; i < N; i++) {
    const x = reqs[i & 1023]!;
    sink.n += x.started;
    x.family = stats.families.lookup;
    x.stage = 'plan';
    x.stage = 'reserve';
    x.stage = 'charge';
    x.family.streamBytes += CHUNK.length;
    const now = performance.now();
    x.family.answered(200, x.started, now);
    x.family.terminated('succeeded', x.started, now);
  }
}

function time(f: () => void): number {
  const t0 = performance.now();
  f();
  return ((performance.now() - t0) * 1e6) / N;
}

function main(): void {
  const stats = new ServingStats();
  const started = performance.now();
  // Start times spread over the buckets, as real answers are.
  const reqs: Req[] = Array.from({ length: 1024 }, (_, i) => ({
    family: stats.families.other, stage: 'admit', started: started - i * i * 0.1,
  }));
  const sink = { n: 0 };
  const base: number[] = [];
  const inst: number[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    base.push(time(() => baseline(reqs, sink)));
    inst.push(time(() => instrumented(reqs, stats, sink)));
  }
  const best = (xs: number[]) => Math.min(...xs);
  const added = best(inst) - best(base);
  console.log(`command: node dist/bench/micro/metrics-hot-path.js --cpu-us ${cpuUs}`);
  console.log(`per request: ${fmt(added, 1)} ns added by the metrics (loop ${fmt(best(base), 1)} ns without, ` +
    `${fmt(best(inst), 1)} ns with; best of ${ROUNDS} rounds of ${N})`);
  console.log(`share of ${cpuUs} us of server CPU per exact lookup: ${fmt((100 * added) / (cpuUs * 1000), 2)}%`);
  if (sink.n === 0) console.log('');
}

main();
