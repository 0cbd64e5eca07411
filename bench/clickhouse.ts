// The ClickHouse data tier against the local shards on the same names:
// ingest records/s into each, then the five flexible query classes of
// flex.ts and exact / wildcard lookups, p50 and p90 over HTTP through two
// `rrscan serve`s (one with --clickhouse-url), answers checked equal.
//
//   node dist/bench/clickhouse.js --clickhouse-url http://127.0.0.1:8123 [--names 500000] [--runs 15]
//
// Needs a running ClickHouse (its tables go into database bench_<names>,
// dropped first); data and NDJSON go to bench/out/. Reasons for the gaps
// belong in the closing note next to the figures.

import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import path from 'node:path';
import { addKey } from '../src/auth/key-admin.js';
import { ClickHouse } from '../src/clickhouse/client.js';
import { rrtypeToText } from '../src/dns/rrtype.js';
import { arg, BIN, environment, fmt, OUT, percentile, timedGet } from './common.js';
import { benchObservations } from './names.js';

const names = Number(arg('names', '500000'));
const runs = Number(arg('runs', '15'));
const url = arg('clickhouse-url', '');
const QUERIES: { name: string; path: string }[] = [
  { name: 'flex selective', path: `regex/rrnames/${encodeURIComponent('^(.*\\.)?paypal[^.]*\\.com\\.$')}` },
  { name: 'flex substring', path: 'regex/rrnames/paypal' },
  { name: 'flex leading wildcard', path: `regex/rrnames/${encodeURIComponent('.*-login\\..*')}` },
  { name: 'flex class-heavy', path: `regex/rrnames/${encodeURIComponent('^[a-z0-9]{30,}\\.')}` },
  { name: 'flex match-all', path: 'regex/rrnames/.' },
  { name: 'lookup exact', path: 'lookup/rrset/name/' },
  { name: 'lookup left wildcard', path: 'lookup/rrset/name/*.com?limit=1000' },
  { name: 'lookup right wildcard', path: 'lookup/rrset/name/download.*?limit=1000' },
];

function rrscan(args: string[]): { seconds: number; out: string } {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`rrscan ${args.join(' ')}: ${r.stdout}${r.stderr}`);
  return { seconds: (performance.now() - t0) / 1000, out: r.stdout.trim().split('\n').pop()! };
}

async function serve(dataDir: string, extra: string[]): Promise<{ port: number; stop: () => void }> {
  const proc = spawn(process.execPath, [BIN, 'serve', '--data', dataDir, '--port', '0', ...extra], {
    env: { ...process.env, RRSCAN_LOG_LEVEL: 'warn' }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  const port = await new Promise<number>((resolve, reject) => {
    proc.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /at https?:\/\/[^:]+:(\d+)\//.exec(out);
      if (m) resolve(Number(m[1]));
    });
    proc.on('exit', (code) => reject(new Error(`server exited ${code}: ${out}`)));
  });
  return { port, stop: () => void proc.kill('SIGTERM') };
}

async function main(): Promise<void> {
  if (url === '') throw new Error('--clickhouse-url http://HOST:8123 is required');
  console.log(`node dist/bench/clickhouse.js --clickhouse-url ${url} --names ${names} --runs ${runs}`);
  console.log(environment());
  mkdirSync(OUT, { recursive: true });
  const ndjson = path.join(OUT, `ch-${names}.ndjson`);
  let firstName = '';
  if (!existsSync(ndjson)) {
    const out = createWriteStream(ndjson);
    for (const o of benchObservations(names)) {
      const line = JSON.stringify({ rrname: o.rrname, rrtype: rrtypeToText(o.rrtype), bailiwick: o.bailiwick,
        rdata: o.rdata.map((r) => r.text), count: o.count, time_first: o.timeFirst, time_last: o.timeLast });
      if (!out.write(`${line}\n`)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
  }
  for (const n of benchObservations(1)) firstName = n.rrname;
  const dataDir = path.join(OUT, `ch-local-${names}`);
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  const database = `bench_${names}`;
  const ch = new ClickHouse(url);
  await ch.exec(`DROP DATABASE IF EXISTS ${database}`);
  console.log(`clickhouse: ${rrscan(['clickhouse', 'init', '--url', url, '--database', database]).out}`);
  const local = rrscan(['ingest', '--data', dataDir, ndjson]);
  const remote = rrscan(['ingest', '--clickhouse-url', url, '--clickhouse-database', database, ndjson]);
  for (const [tier, r] of [['local shards', local], ['ClickHouse', remote]] as const) {
    console.log(`ingest ${names} records, ${tier}: ${fmt(r.seconds, 2)} s wall, ${Math.round(names / r.seconds)} records/s (${r.out})`);
  }
  const key = await addKey({ kind: 'sqlite', dataDir }, { quota: { kind: 'unlimited' }, resultsMax: 1_000_000 });
  const [a, b] = await Promise.all([serve(dataDir, []), serve(dataDir, ['--clickhouse-url', url, '--clickhouse-database', database])]);
  try {
    console.log('query | local p50 / p90 ms | ClickHouse p50 / p90 ms | results | same answer');
    for (const q of QUERIES) {
      const p = `/pdns/v2/${q.path}${q.name === 'lookup exact' ? encodeURIComponent(firstName) : ''}`;
      const times: { local: number[]; remote: number[] } = { local: [], remote: [] };
      let same = true;
      let results = 0;
      for (let i = 0; i < runs; i++) {
        const x = await timedGet(a.port, p, { 'X-API-Key': key });
        const y = await timedGet(b.port, p, { 'X-API-Key': key });
        times.local.push(x.ms);
        times.remote.push(y.ms);
        same &&= x.body === y.body;
        results = (x.body.match(/"obj"/g) ?? []).length;
      }
      console.log(`${q.name} | ${fmt(percentile(times.local, 50))} / ${fmt(percentile(times.local, 90))} | ` +
        `${fmt(percentile(times.remote, 50))} / ${fmt(percentile(times.remote, 90))} | ${results} | ${same ? 'yes' : 'NO'}`);
    }
  } finally {
    a.stop();
    b.stop();
    ch.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
