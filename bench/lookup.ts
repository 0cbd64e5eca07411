// Standard-search benchmark (issue 4): exact-name lookup latency on an
// N-RRset dataset, then autocannon at 100 connections against a small
// lookup and rate_limit, beside a bare uWebSockets.js hello-world measured in
// the same run on the same machine.
//
//   npm run build && node dist/bench/lookup.js [--data bench/out/flex-2000000] [--seconds 10]
// (build the data with bench/flex.ts first; it reuses that dataset)
//
// Targets: exact lookup <= 1 ms p50; wildcard, CIDR and range lookups cost in
// proportion to what they return; >= 70% of bare uWS req/s and p99 <= 5 ms at
// 100 connections. On 2 shared cores autocannon's own JavaScript is the
// bottleneck near 26k req/s, so the same four runs are repeated with wrk
// (Debian package `wrk`), which leaves the server most of the CPU.

import path from 'node:path';
import autocannon from 'autocannon';
import { addKey } from '../src/auth/key-admin.js';
import { ShardSet } from '../src/search/local/shard-set.js';
import { blobRecord } from '../src/shard/blob.js';
import { OUT, arg, bareUws, environment, fmt, percentile, startServer, timedGet, wrk, type Load } from './common.js';

const dataDir = path.resolve(arg('data', path.join(OUT, 'flex-2000000')));
const seconds = Number(arg('seconds', '10'));

async function cannon(url: string, headers: Record<string, string>): Promise<{ rps: number; p99: number; p50: number }> {
  const r = await autocannon({ url, connections: 100, duration: seconds, headers });
  return { rps: r.requests.average, p99: r.latency.p99, p50: r.latency.p50 };
}

async function main(): Promise<void> {
  const set = new ShardSet(dataDir);
  const snap = await set.open();
  const rrsets = snap.shards.reduce((a, s) => a + s.rrsetCount, 0);
  // Sample names spread over the data to look up.
  const names: string[] = [];
  for (const s of snap.shards) {
    const n = s.flexNames.offsets.length - 1;
    for (let i = 0; i < 200; i++) names.push(blobRecord(s.flexNames, Math.floor((i * n) / 200)));
  }
  await set.close();
  const key = await addKey({ kind: 'sqlite', dataDir }, { quota: { kind: 'unlimited' } });
  const daily = await addKey({ kind: 'sqlite', dataDir }, { quota: { kind: 'daily', limit: 1_000_000_000 } });
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
    console.log(`exact lookup, round trip incl. client: p50 ${fmt(percentile(times, 50), 3)} ms, ` +
      `p99 ${fmt(percentile(times, 99), 3)} ms (target p50 <= 1 ms)`);
    await proportionalCost(server.port, key, names);

    const lookupUrl = `http://127.0.0.1:${server.port}/pdns/v2/lookup/rrset/name/${names[7]}`;
    const rateUrl = `http://127.0.0.1:${server.port}/pdns/v2/rate_limit`;
    const wrkRun = async (u: string, h: Record<string, string>) => wrk(u, h, seconds);
    for (const [tool, run] of [['autocannon', cannon], ['wrk', wrkRun]] as const) {
      const hello = await bareUws();
      const base = await run(`http://127.0.0.1:${hello.port}/`, {});
      hello.stop();
      if (base === undefined) {
        console.log(`${tool}: not installed (apt-get install ${tool}); rows skipped`);
        continue;
      }
      const look = (await run(lookupUrl, { 'X-API-Key': key }))!;
      const lookDaily = (await run(lookupUrl, { 'X-API-Key': daily }))!;
      const rl = (await run(rateUrl, { 'X-API-Key': key }))!;
      const row = (label: string, r: Load) =>
        console.log(`${`${tool}: ${label}`.padEnd(40)} ${fmt(r.rps, 0).padStart(8)} req/s  ` +
          `p50 ${fmt(r.p50, 2)} ms  p99 ${fmt(r.p99, 2)} ms  ` +
          `${fmt((100 * r.rps) / base.rps, 0)}% of bare uWS`);
      row('bare uWS hello-world', base);
      row('lookup, unlimited key', look);
      row('lookup, daily-quota key', lookDaily);
      row('rate_limit', rl);
      console.log(`${tool}: quota path cost ${fmt(100 * (1 - lookDaily.rps / look.rps), 1)}% of throughput (target <= 10%)`);
    }
    console.log('targets: >= 70% of bare uWS req/s, p99 <= 5 ms (100 connections)');
  } finally {
    await server.stop();
  }
}

/**
 * Wildcard, CIDR and range lookups at growing limits: the time should follow
 * the rows returned, not the size of the data.
 */
async function proportionalCost(port: number, key: string, names: string[]): Promise<void> {
  const name = names[11]!;
  const parent = name.slice(name.indexOf('.') + 1);
  const tld = parent.slice(parent.lastIndexOf('.', parent.length - 2) + 1);
  const shapes = [
    ['right wildcard', `/pdns/v2/lookup/rrset/name/*.${tld}`],
    ['left wildcard', `/pdns/v2/lookup/rrset/name/${name.split('.')[0]}.*`],
    ['rdata name wildcard', `/pdns/v2/lookup/rdata/name/*.${tld}`],
    ['CIDR 10.0.0.0/8', '/pdns/v2/lookup/rdata/ip/10.0.0.0,8'],
    ['range 10.0.0.0-10.255.255.255', '/pdns/v2/lookup/rdata/ip/10.0.0.0-10.255.255.255'],
  ];
  console.log('lookup shape                        limit     rows   p50 ms   us/row');
  for (const [label, base] of shapes) {
    for (const limit of [10, 1000, 100000]) {
      const times: number[] = [];
      let rows = 0;
      for (let i = 0; i < 7; i++) {
        const r = await timedGet(port, `${base}?limit=${limit}`, { 'X-API-Key': key });
        if (r.status !== 200) throw new Error(`HTTP ${r.status} for ${base}`);
        times.push(r.ms);
        rows = r.body.split('\n').filter((l) => l.startsWith('{"obj"')).length;
      }
      const p50 = percentile(times, 50);
      console.log(`${label!.padEnd(34)} ${String(limit).padStart(7)} ${String(rows).padStart(8)} ${fmt(p50, 2).padStart(8)} ` +
        `${rows ? fmt((1000 * p50) / rows, 2).padStart(8) : '     n/a'}`);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
