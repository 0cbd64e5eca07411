// Same answers as the previous build: the differential check a change to
// the result path runs on a bench dataset (issue 22 "Keep": every answer
// byte-identical). Both builds serve the same shards (each its own scratch
// directory of hard links and its own keys); every query of a generated set
// is asked of both, and the bodies must be equal byte for byte.
//
//   npm run build && node dist/bench/same-answers.js --baseline DIR [--data DIR] [--queries 400] [--seed 1]
//
// DIR is another checkout, built (main before the change). The queries are
// drawn from the data (names, parents, addresses and times of a shard) over
// every query class the scale bench times, with limits, offsets, exclude,
// rrtype filters, time fences, aggr=false and humantime mixed in. Prints the
// count compared, rows and bytes, and exits 1 at the first difference with
// the URL and the first line that differs. Keep-alive lines (`{}`) are left
// out of the comparison: when they come depends on each server's timing,
// and they carry nothing. An answer that ended in the query's deadline on
// either build is not compared (the other build may have had time to
// finish); how many, and on which build, is printed. The builds are asked
// one after the other, so neither takes the other's core.

import { rmSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { seededRandom } from '../src/demo/prng.js';
import { STREAM_MESSAGES } from '../src/errors/catalogue.js';
import { KEEPALIVE_LINE, terminatorLine } from '../src/render/saf.js';
import { readManifest } from '../src/shard/manifest.js';
import { ShardReader } from '../src/shard/shard-reader.js';
import { BIN, OUT, addKeyWith, arg, environment, startServer, type BenchServer } from './common.js';
import { servingCopy } from './dataset.js';

const dataDir = path.resolve(arg('data', path.join(OUT, 'slope-2000000', 'shards-10')));
const baseline = arg('baseline', '');
const queries = Number(arg('queries', '400'));
const seed = Number(arg('seed', '1'));

/** Names, parents, addresses and the time span of the data, from a few shards' records. */
interface Samples { names: string[]; parents: string[]; addresses: string[]; timeMin: number; timeMax: number }

function samplesOf(dir: string, random: () => number): Samples {
  const m = readManifest(dir);
  const out: Samples = { names: [], parents: [], addresses: [], timeMin: Infinity, timeMax: 0 };
  for (const e of m.shards.slice(0, 4)) {
    const r = ShardReader.attach(ShardReader.map(path.join(dir, e.file)));
    out.timeMin = Math.min(out.timeMin, r.timeMin);
    out.timeMax = Math.max(out.timeMax, r.timeMax);
    for (let k = 0; k < 50; k++) {
      const i = Math.floor(random() * r.rrsetCount);
      const name = r.ownerName(i);
      out.names.push(name);
      out.parents.push(name.slice(name.indexOf('.') + 1));
      if (r.rrtype(i) === 1) out.addresses.push(r.rdataTexts(i)[0]!);
    }
  }
  if (out.addresses.length === 0) out.addresses.push('192.0.2.1');
  return out;
}

/** One generated query path. */
function queryOf(s: Samples, random: () => number): string {
  const pick = <T>(a: readonly T[]): T => a[Math.floor(random() * a.length)]!;
  const time = () => Math.floor(s.timeMin + random() * (s.timeMax - s.timeMin));
  const params: string[] = [];
  const maybe = (p: number, f: () => string) => { if (random() < p) params.push(f()); };
  const fences = ['time_first_after', 'time_first_before', 'time_last_after', 'time_last_before'];
  const fence = () => maybe(0.2, () => `${pick(fences)}=${time()}`);
  const name = pick(s.names);
  const word = name.split('.')[0]!.slice(0, 3 + Math.floor(random() * 4));
  let base: string;
  if (random() < 0.5) {
    const target = random() < 0.8 ? 'rrnames' : 'rdata';
    const pattern = pick([word, `^${word}`, `${word}.*\\.com\\.$`, '.', '^[a-z0-9]{12,}\\.', `(^|\\.)${word}[^.]*\\.`, '-sec\\.']);
    const glob = random() < 0.15;
    base = glob ? `/pdns/v2/glob/${target}/${encodeURIComponent(`*${word}*`)}` : `/pdns/v2/regex/${target}/${encodeURIComponent(pattern)}`;
    if (random() < 0.3) base += `/${pick(['A', 'AAAA', 'NS', 'CNAME', 'MX', 'TXT', 'ANY'])}`;
    maybe(0.2, () => `exclude=${encodeURIComponent(pick(['\\.net\\.$', `^${word.slice(0, 2)}`, 'a']))}`);
    maybe(0.3, () => `offset=${Math.floor(random() * 500)}`);
  } else {
    const kind = Math.floor(random() * 4);
    base = kind === 0 ? `/pdns/v2/lookup/rrset/name/${name}`
      : kind === 1 ? `/pdns/v2/lookup/rrset/name/*.${pick(s.parents)}`
        : kind === 2 ? `/pdns/v2/lookup/rdata/ip/${pick(s.addresses).split('.').slice(0, 3).join('.')}.0,24`
          : `/pdns/v2/lookup/rdata/name/${name}`;
    if (kind <= 1 && random() < 0.3) base += `/${pick(['A', 'NS', 'MX', 'ANY'])}`;
    maybe(0.3, () => 'aggr=false');
    maybe(0.2, () => 'humantime=true');
    maybe(0.2, () => `offset=${Math.floor(random() * 100)}`);
  }
  maybe(0.6, () => `limit=${pick([1, 10, 100, 1000, 10000])}`);
  fence();
  return params.length === 0 ? base : `${base}?${params.join('&')}`;
}

const KEEP_ALIVE = Buffer.from(KEEPALIVE_LINE);
const TIMED_OUT = Buffer.from(terminatorLine('failed', STREAM_MESSAGES.SCAN_TIMEOUT));

/** The body without its keep-alive lines. */
function answerOf(body: Buffer): Buffer {
  if (body.indexOf(KEEP_ALIVE) < 0) return body;
  return Buffer.from(body.toString('latin1').split('\n').filter((l) => `${l}\n` !== KEEPALIVE_LINE).join('\n'), 'latin1');
}

function get(port: number, url: string, key: string): Promise<{ status: number; body: Buffer }> {
  return new Promise((resolve, reject) => {
    http.get({ host: '127.0.0.1', port, path: url, headers: { 'X-API-Key': key } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: answerOf(Buffer.concat(chunks)) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** The first line where two bodies differ, for the report. */
function firstDifference(a: Buffer, b: Buffer): string {
  const la = a.toString('latin1').split('\n');
  const lb = b.toString('latin1').split('\n');
  for (let i = 0; i < Math.max(la.length, lb.length); i++) {
    if (la[i] !== lb[i]) return `line ${i + 1}:\n  baseline:   ${la[i] ?? '(none)'}\n  this build: ${lb[i] ?? '(none)'}`;
  }
  return 'bodies differ';
}

async function main(): Promise<void> {
  if (baseline === '') throw new Error('--baseline DIR (a built checkout) is required');
  console.log(`command: node dist/bench/same-answers.js --baseline ${baseline} --data ${dataDir} --queries ${queries} --seed ${seed}`);
  console.log(`env: ${environment()}`);
  const scratch = path.join(OUT, `same-answers-${process.pid}`);
  const servers: BenchServer[] = [];
  try {
    const builds = [path.join(path.resolve(baseline), 'bin', 'rrscan.js'), BIN].map((bin, i) => {
      const dir = servingCopy(dataDir, path.join(scratch, String(i)));
      return { bin, dir, key: addKeyWith(bin, dir, '--unlimited') };
    });
    for (const b of builds) servers.push(await startServer(b.dir, {}, ['--scrub-mib-per-s', '0'], b.bin));
    const random = seededRandom(seed);
    const samples = samplesOf(dataDir, random);
    let rows = 0;
    let bytes = 0;
    /** Answers not compared because they ended at the deadline: on the baseline, on this build. */
    const timedOut = [0, 0];
    for (let q = 0; q < queries; q++) {
      const url = queryOf(samples, random);
      const a = await get(servers[0]!.port, url, builds[0]!.key);
      const b = await get(servers[1]!.port, url, builds[1]!.key);
      const late = a.body.includes(TIMED_OUT) ? 0 : b.body.includes(TIMED_OUT) ? 1 : -1;
      if (late >= 0) {
        timedOut[late] = timedOut[late]! + 1;
        continue;
      }
      if (a.status !== b.status || !a.body.equals(b.body)) {
        console.log(`DIFFERENT after ${q} equal answers: ${url}\n  status ${a.status} vs ${b.status}, ` +
          `${a.body.length} vs ${b.body.length} bytes\n${firstDifference(a.body, b.body)}`);
        process.exitCode = 1;
        return;
      }
      rows += a.body.toString('latin1').split('\n').filter((l) => l.startsWith('{"obj"')).length;
      bytes += a.body.length;
    }
    console.log(`same answers: ${queries - timedOut[0]! - timedOut[1]!} of ${queries} queries, ${rows} result rows, ${bytes} bytes, ` +
      `byte-identical to the baseline; not compared, ended at the deadline: ${timedOut[0]} on the baseline, ${timedOut[1]} on this build`);
  } finally {
    await Promise.all(servers.map((s) => s.stop()));
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
