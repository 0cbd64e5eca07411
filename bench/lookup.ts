// Standard-search benchmark (issue 4): exact-name lookup latency on an
// N-RRset dataset, then autocannon at 100 connections against a small
// lookup and rate_limit, beside a bare uWebSockets.js hello-world measured in
// the same run on the same machine.
//
//   npm run build && node dist/bench/lookup.js [--data bench/out/flex-2000000] [--seconds 10]
// (build the data with bench/flex.ts first; it reuses that dataset)
//
// Targets: exact lookup <= 1 ms p50; >= 70% of bare uWS req/s; p99 <= 5 ms.
// On 2 shared cores autocannon's own JavaScript is the bottleneck near 26k
// req/s; use wrk (Debian) for the server's own limit.

import { fork } from 'node:child_process';
import path from 'node:path';
import autocannon from 'autocannon';
import { addKey } from '../src/auth/access-gate.js';
import { ShardSet } from '../src/search/shard-set.js';
import { ShardReader } from '../src/shard/shard-reader.js';
import { OUT, arg, environment, fmt, percentile, startServer, timedGet } from './common.js';

const dataDir = path.resolve(arg('data', path.join(OUT, 'flex-2000000')));
const seconds = Number(arg('seconds', '10'));

async function cannon(url: string, headers: Record<string, string>): Promise<{ rps: number; p99: number; p50: number }> {
  const r = await autocannon({ url, connections: 100, duration: seconds, headers });
  return { rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50 };
}

async function bareUws(): Promise<{ port: number; stop: () => void }> {
  const child = fork(new URL('./hello-uws.js', import.meta.url), [], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
  const port = await new Promise<number>((resolve) => child.once('message', (m) => resolve(Number(m))));
  return { port, stop: () => child.kill() };
}

async function main(): Promise<void> {
  const set = new ShardSet(dataDir);
  const snap = set.load();
  const rrsets = snap.shards.reduce((a, s) => a + s.rrsetCount, 0);
  // Sample names spread over the data to look up.
  const names: string[] = [];
  for (const s of snap.shards) {
    const n = s.flexNames.offsets.length - 1;
    for (let i = 0; i < 200; i++) names.push(ShardReader.record(s.flexNames, Math.floor((i * n) / 200)));
  }
  set.close();
  const key = addKey(dataDir, { quota: { kind: 'unlimited' } });
  const daily = addKey(dataDir, { quota: { kind: 'daily', limit: 1_000_000_000 } });
  const server = await startServer(dataDir);
  console.log(`command: node dist/bench/lookup.js --data ${dataDir} --seconds ${seconds}`);
  console.log(`env: ${environment()}`);
  console.log(`data: ${rrsets} RRsets in ${snap.shards.length} shard(s)`);
  try {
    const times: number[] = [];
    for (const n of names) {
      const r = await timedGet(server.port, `/pdns/v2/lookup/rrset/name/${n}`, { 'X-API-Key': key });
      if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
      times.push(r.ms);
    }
    console.log(`exact lookup, round trip incl. client: p50 ${fmt(percentile(times, 50), 3)} ms, p99 ${fmt(percentile(times, 99), 3)} ms (target p50 <= 1 ms)`);
    const hello = await bareUws();
    const base = await cannon(`http://127.0.0.1:${hello.port}/`, {});
    hello.stop();
    const look = await cannon(`http://127.0.0.1:${server.port}/pdns/v2/lookup/rrset/name/${names[7]}`, { 'X-API-Key': key });
    const lookDaily = await cannon(`http://127.0.0.1:${server.port}/pdns/v2/lookup/rrset/name/${names[7]}`, { 'X-API-Key': daily });
    const rl = await cannon(`http://127.0.0.1:${server.port}/pdns/v2/rate_limit`, { 'X-API-Key': key });
    const row = (label: string, r: { rps: number; p50: number; p99: number }) =>
      console.log(`${label.padEnd(34)} ${fmt(r.rps, 0).padStart(8)} req/s  p50 ${fmt(r.p50, 1)} ms  p99 ${fmt(r.p99, 1)} ms  ` +
        `${fmt((100 * r.rps) / base.rps, 0)}% of bare uWS`);
    row('bare uWS hello-world', base);
    row('lookup, unlimited key', look);
    row('lookup, daily-quota key', lookDaily);
    row('rate_limit', rl);
    console.log(`quota path cost: ${fmt(100 * (1 - lookDaily.rps / look.rps), 1)}% of throughput (target <= 10%)`);
    console.log('targets: >= 70% of bare uWS req/s, p99 <= 5 ms (autocannon, 100 connections)');
  } finally {
    await server.stop();
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
