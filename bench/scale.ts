// One box, 100 million RRsets (issue 23): start-up, every query class, the
// server's memory and compaction at a data size that does not fit the page
// cache comfortably, and the fixed cost a shard adds to a search.
//
//   npm run build && node dist/bench/scale.js [--rrsets 100000000] [--runs 15] [--slope-names 10000000]
//     [--memory-mb 4096] [--only scale|slope] [--data bench/out/scale-100000000]
//
// Scale: `rrscan demo --rrsets N` builds the dataset once (realistic RRsets
// of every type: src/demo), `rrscan compact --memory-mb M` merges it, and
// both are reused afterwards (delete the directory to build again). Then:
// start-up to the first ping and to /readyz ready, with the record of
// verified shards (a restart) and without it (a first start on copied
// files); the query classes of the issue, p50/p90 of curl over one kept-alive
// connection (curl's own cost is far below Node's http client's); and the
// server's RssAnon apart from RssFile (the mapped shard pages a search
// touches count in RssFile and are the page cache's, not the server's).
//
// Slope: the same --slope-names names (bench/names.ts, one A RRset each) as
// 40 shards (ingest), 10 and 1 (compactions of hard-linked copies), served
// in turn; the fixed cost a shard adds to a search is the slope of p50 over
// the shard count. Targets: <= 50 us per shard for a flexible search, <= 5 us
// for a lookup.
//
// It takes tens of minutes at 100 M RRsets: a benchmark, not a test.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, linkSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { addKey } from '../src/auth/key-admin.js';
import { ingestObservations } from '../src/ingest/run.js';
import { compact } from '../src/shard/compactor.js';
import { MANIFEST_FILE, readManifest } from '../src/shard/manifest.js';
import { ShardReader } from '../src/shard/shard-reader.js';
import { VERIFIED_FILE } from '../src/shard/verified.js';
import { BIN, OUT, arg, curlTimes, environment, fmt, percentile, startServer, type BenchServer } from './common.js';
import { benchObservations } from './names.js';

const rrsets = Number(arg('rrsets', '100000000'));
const runs = Number(arg('runs', '15'));
const slopeNames = Number(arg('slope-names', '10000000'));
const memoryMb = Number(arg('memory-mb', '4096'));
const only = arg('only', '');
const dataDir = path.resolve(arg('data', path.join(OUT, `scale-${rrsets}`)));

const lines: string[] = [];
const say = (s: string) => {
  console.log(s);
  lines.push(s);
};

/** RssAnon, RssFile and VmHWM of a process, in MiB (/proc/PID/status). */
function memoryOf(pid: number): { anon: number; file: number; hwm: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? 0) / 1024;
  return { anon: kib('RssAnon'), file: kib('RssFile'), hwm: kib('VmHWM') };
}

/** Runs `rrscan ARGS` to completion, sampling its RssAnon; its wall seconds and peak anonymous MiB. */
async function timedCli(args: string[]): Promise<{ seconds: number; peakAnonMb: number; stdout: string }> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [BIN, ...args], { stdio: ['ignore', 'pipe', 'inherit'] });
  let stdout = '';
  proc.stdout.on('data', (d: Buffer) => { stdout += d.toString(); });
  let peak = 0;
  const sample = setInterval(() => {
    try {
      peak = Math.max(peak, memoryOf(proc.pid!).anon);
    } catch {
      // exited between two samples
    }
  }, 250);
  const code = await new Promise<number | null>((r) => proc.on('exit', r));
  clearInterval(sample);
  if (code !== 0) throw new Error(`rrscan ${args.join(' ')} exited ${code}: ${stdout}`);
  return { seconds: (performance.now() - t0) / 1000, peakAnonMb: peak, stdout };
}

function httpStatus(port: number, p: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const req = http.get({ host: '127.0.0.1', port, path: p, agent: false }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => { body += c.toString(); });
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve({ status: 0, body: '' }));
  });
}

/** Starts `serve` and times it: to its banner (listening), to the first ping, and to /readyz ready. */
async function timedStart(dir: string): Promise<{ server: BenchServer; listenS: number; pingS: number; readyS: number }> {
  const t0 = performance.now();
  const server = await startServer(dir, {}, ['--metrics-port', '0']);
  const listenS = (performance.now() - t0) / 1000;
  while ((await httpStatus(server.port, '/pdns/v2/ping')).status !== 200) await new Promise((r) => setTimeout(r, 5));
  const pingS = (performance.now() - t0) / 1000;
  while ((await httpStatus(server.metricsPort!, '/readyz')).status !== 200) await new Promise((r) => setTimeout(r, 20));
  return { server, listenS, pingS, readyS: (performance.now() - t0) / 1000 };
}

/** curl p50/p90 of one GET, and how many result lines it answers. */
function timeQuery(port: number, url: string, key: string): { p50: number; p90: number; rows: number } {
  const t = curlTimes(port, url, key, runs);
  if (t === undefined) throw new Error('curl is needed: apt-get install curl');
  const r = spawnSync('curl', ['--path-as-is', '-s', '-H', `X-API-Key: ${key}`, `http://127.0.0.1:${port}${url}`],
    { encoding: 'utf8', maxBuffer: 1 << 30 });
  const rows = r.stdout.split('\n').filter((l) => l.startsWith('{"obj"')).length;
  return { p50: percentile(t, 50), p90: percentile(t, 90), rows };
}

/** Picks real things to look up from the data: a name, an address, a busy parent name. */
function samples(dir: string): { name: string; address: string; parent: string } {
  const m = readManifest(dir);
  const s = ShardReader.map(path.join(dir, m.shards[Math.floor(m.shards.length / 2)]!.file));
  const r = ShardReader.attach(s);
  const owners = r.owners.offsets.length - 1;
  const name = r.ownerName(r.rrsetsStart(Math.floor(owners / 2)));
  let address = '192.0.2.1';
  for (let i = 0; i < r.rrsetCount; i++) {
    if (r.rrtype(i) === 1) {
      address = r.rdataTexts(i)[0]!;
      break;
    }
  }
  // The parent (a name less its first label) that most names of a stretch of the shard sit under: a wildcard
  // lookup of it has rows to spare for limit=1000 (a parent of the sampled name may have a handful).
  const under = new Map<string, number>();
  for (let o = 0; o < Math.min(owners, 200_000); o++) {
    const n = r.ownerName(r.rrsetsStart(o));
    const p = n.slice(n.indexOf('.') + 1);
    under.set(p, (under.get(p) ?? 0) + 1);
  }
  const parent = [...under].reduce((a, b) => (b[1] > a[1] ? b : a), ['', 0])[0] || name.split('.').slice(-3).join('.');
  return { name, address, parent };
}

interface QueryClass {
  name: string;
  url: string;
  targetMs: number;
}

function queryClasses(s: { name: string; address: string; parent: string }): QueryClass[] {
  const flex = (p: string, q = '') => `/pdns/v2/regex/rrnames/${encodeURIComponent(p)}${q}`;
  const net24 = s.address.split('.').slice(0, 3).join('.') + '.0,24';
  return [
    { name: 'selective flex', url: flex('^(.*\\.)?paypal[^.]*\\.com\\.$'), targetMs: 5 },
    { name: 'substring flex', url: flex('netflix-billing'), targetMs: 5 },
    { name: '10,000-row flex (match-all)', url: flex('.', '?limit=10000'), targetMs: 5 },
    { name: 'class-heavy flex', url: flex('^[a-z0-9]{30,}\\.', '?limit=10000'), targetMs: 1000 },
    { name: 'exact lookup', url: `/pdns/v2/lookup/rrset/name/${s.name}`, targetMs: 0.5 },
    { name: '1,000-row wildcard lookup', url: `/pdns/v2/lookup/rrset/name/*.${s.parent}?limit=1000`, targetMs: 3 },
    { name: 'rdata ip /24', url: `/pdns/v2/lookup/rdata/ip/${net24}`, targetMs: 3 },
  ];
}

async function keyFor(dir: string): Promise<string> {
  return addKey({ kind: 'sqlite', dataDir: dir }, { quota: { kind: 'unlimited' }, resultsMax: 1_000_000 });
}

async function scale(): Promise<void> {
  say(`== scale: ${rrsets} RRsets in ${dataDir}`);
  if (!existsSync(path.join(dataDir, MANIFEST_FILE))) {
    const demo = await timedCli(['demo', '--data', dataDir, '--rrsets', String(rrsets)]);
    say(`demo: ${fmt(demo.seconds)} s, ${fmt(rrsets / demo.seconds / 1000, 0)} k RRsets/s, peak RssAnon ${fmt(demo.peakAnonMb, 0)} MiB`);
    const before = readManifest(dataDir).shards.length;
    const c = await timedCli(['compact', '--data', dataDir, '--memory-mb', String(memoryMb)]);
    const after = readManifest(dataDir).shards;
    say(`compact --memory-mb ${memoryMb}: ${before} -> ${after.length} shards in ${fmt(c.seconds)} s, ` +
      `${fmt(rrsets / c.seconds / 1000, 0)} k RRsets/s, peak RssAnon ${fmt(c.peakAnonMb, 0)} MiB ` +
      `(targets: >= 300 k RRsets/s, <= 16 shards at 100 M, anonymous memory under the bound)`);
  }
  const m = readManifest(dataDir);
  const bytes = m.shards.reduce((n, e) => n + e.bytes, 0);
  say(`data: ${m.shards.reduce((n, e) => n + e.rrsets, 0)} RRsets, ${m.shards.length} shards, ${fmt(bytes / 1e9, 2)} GB`);
  const key = await keyFor(dataDir);

  // A first start on files never verified here, then a restart (the record of verified shards vouches for them).
  rmSync(path.join(dataDir, VERIFIED_FILE), { force: true });
  const first = await timedStart(dataDir);
  await first.server.stop();
  const restart = await timedStart(dataDir);
  say(`start-up, first (verifies every shard in the background): listening ${fmt(first.listenS, 2)} s, first ping ` +
    `${fmt(first.pingS, 2)} s, ready ${fmt(first.readyS, 2)} s`);
  say(`start-up, restart (verified record): listening ${fmt(restart.listenS, 2)} s, first ping ${fmt(restart.pingS, 2)} s, ` +
    `ready ${fmt(restart.readyS, 2)} s (target: serving <= 2 s at any size)`);
  const server = restart.server;
  try {
    const mem0 = memoryOf(server.proc.pid!);
    say(`server memory after start: RssAnon ${fmt(mem0.anon, 0)} MiB, RssFile ${fmt(mem0.file, 0)} MiB`);
    say(`${'class'.padEnd(28)} ${'rows'.padStart(7)} ${'p50 ms'.padStart(9)} ${'p90 ms'.padStart(9)}  target`);
    for (const c of queryClasses(samples(dataDir))) {
      const t = timeQuery(server.port, c.url, key);
      say(`${c.name.padEnd(28)} ${String(t.rows).padStart(7)} ${fmt(t.p50, 2).padStart(9)} ${fmt(t.p90, 2).padStart(9)}  ` +
        `<= ${c.targetMs} ms ${t.p50 <= c.targetMs ? 'MET' : 'MISSED'}`);
    }
    const mem = memoryOf(server.proc.pid!);
    say(`server memory after the queries: RssAnon ${fmt(mem.anon, 0)} MiB (target <= 1024), RssFile ${fmt(mem.file, 0)} MiB, ` +
      `peak RSS ${fmt(mem.hwm, 0)} MiB`);
  } finally {
    await server.stop();
  }
}

/** Hard-links the shards and manifest of `from` into a new directory `to` (shards are immutable; compaction unlinks). */
function linkCopy(from: string, to: string): void {
  mkdirSync(to, { recursive: true });
  for (const f of readdirSync(from)) if (f.endsWith('.rrs') || f === MANIFEST_FILE) linkSync(path.join(from, f), path.join(to, f));
}

async function slopeDirs(): Promise<Map<number, string>> {
  const base = path.join(OUT, `slope-${slopeNames}`);
  const dirs = new Map([40, 10, 1].map((n) => [n, path.join(base, `shards-${n}`)]));
  const d40 = dirs.get(40)!;
  if (!existsSync(path.join(d40, MANIFEST_FILE))) {
    say(`building ${slopeNames} names as 40 shards in ${d40} ...`);
    const per = Math.ceil(slopeNames / 40);
    const all = benchObservations(slopeNames);
    for (let i = 0; i < 40; i++) {
      await ingestObservations((function* () {
        for (let k = 0; k < per; k++) {
          const o = all.next();
          if (o.done === true) return;
          yield o.value;
        }
      })(), d40, `slope ${i}`);
    }
  }
  for (const n of [10, 1]) {
    const d = dirs.get(n)!;
    if (existsSync(path.join(d, MANIFEST_FILE))) continue;
    say(`compacting a copy into ${n} shard(s) in ${d} ...`);
    linkCopy(d40, d);
    await compact(d, { shardRrsetsMax: Math.ceil(slopeNames / n), threads: 1 });
  }
  return dirs;
}

async function slope(): Promise<void> {
  say(`== slope: ${slopeNames} names as 40, 10 and 1 shards`);
  const dirs = await slopeDirs();
  const classes = [
    { name: 'selective flex', url: `/pdns/v2/regex/rrnames/${encodeURIComponent('^(.*\\.)?paypal[^.]*\\.com\\.$')}`, targetUs: 50 },
    { name: 'substring flex', url: '/pdns/v2/regex/rrnames/paypal', targetUs: 50 },
    { name: 'exact lookup', url: '', targetUs: 5 },
  ];
  const p50 = new Map<string, Map<number, number>>(classes.map((c) => [c.name, new Map()]));
  for (const [n, dir] of dirs) {
    const shards = readManifest(dir).shards.length;
    const key = await keyFor(dir);
    const { server } = await timedStart(dir);
    try {
      const name = samples(dir).name;
      for (const c of classes) {
        const url = c.url || `/pdns/v2/lookup/rrset/name/${name}`;
        p50.get(c.name)!.set(n, timeQuery(server.port, url, key).p50);
      }
    } finally {
      await server.stop();
    }
    say(`  ${n} (${shards} shards): ${classes.map((c) => `${c.name} ${fmt(p50.get(c.name)!.get(n)!, 3)} ms`).join(', ')}`);
  }
  for (const c of classes) {
    const t = p50.get(c.name)!;
    const perShard = ((t.get(40)! - t.get(1)!) / 39) * 1000;
    say(`${c.name.padEnd(16)} p50 1/10/40 shards: ${[1, 10, 40].map((n) => fmt(t.get(n)!, 3)).join(' / ')} ms; ` +
      `slope ${fmt(perShard, 1)} us per shard (target <= ${c.targetUs} us) ${perShard <= c.targetUs ? 'MET' : 'MISSED'}`);
  }
}

async function main(): Promise<void> {
  say(`command: node dist/bench/scale.js --rrsets ${rrsets} --runs ${runs} --slope-names ${slopeNames} --memory-mb ${memoryMb}` +
    `${only ? ` --only ${only}` : ''}`);
  say(`env: ${environment()}`);
  if (only !== 'scale') await slope();
  if (only !== 'slope') await scale();
  mkdirSync(OUT, { recursive: true });
  writeFileSync(path.join(OUT, `scale-${rrsets}-${new Date().toISOString().slice(0, 19)}.txt`), lines.join('\n') + '\n');
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
