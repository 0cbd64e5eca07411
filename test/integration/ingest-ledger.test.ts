// The input ledger of a data directory (shard/ledger.ts): `rrscan ingest`
// given a file whose bytes a published shard was made from skips it, says so
// on stderr, and no answer changes; by content, not name; through compaction;
// `--again` ingests anyway; an ingest killed with SIGKILL and run again
// answers as one clean ingest (crash.test.ts kills at twenty more points).

import { spawn } from 'node:child_process';
import { appendFileSync, copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import type { Manifest } from '../../src/shard/manifest.js';
import { addKey, answer, BIN, cli, get, metric, objects, startServer, tempPaths, until, type Server } from '../helpers/rrscan.js';

const temp = tempPaths();
afterAll(temp.removeAll);

const T0 = 1_700_000_000;
const rec = (name: string, count: number) =>
  ({ count, time_first: T0, time_last: T0 + 100, rrname: `${name}.ledger.example.`, rrtype: 'A', bailiwick: 'ledger.example.',
    rdata: ['192.0.2.7'] });
const QUERIES = ['/pdns/v2/lookup/rrset/name/*.ledger.example.', '/pdns/v2/glob/rrnames/*.ledger.example.',
  '/pdns/v2/summarize/rrset/name/*.ledger.example.'];

/** Writes an NDJSON file beside the data directory (never inside it). */
function ndjson(dir: string, name: string, recs: object[]): string {
  const file = path.join(dir, name);
  writeFileSync(file, recs.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return file;
}

const manifest = (data: string) => JSON.parse(readFileSync(path.join(data, 'manifest.json'), 'utf8')) as Manifest;
const sha = (data: string, file: string) => manifest(data).shards.flatMap((s) => s.inputs ?? []).find((i) => i.name === file)?.sha256;
const skipLine = (file: string, digest: string, where: string) =>
  `rrscan ingest: ${file}: already ingested (sha256 ${digest.slice(0, 12)}…, ${where}); skipped\n`;

function ingest(data: string, files: string[], extra: string[] = []): { stdout: string; stderr: string } {
  const r = cli(['ingest', '--data', data, ...extra, ...files]);
  expect(r.code, r.stderr).toBe(0);
  return r;
}

describe('rrscan ingest and the input ledger', () => {
  let src: string;
  let data: string;
  let key: string;
  let server: Server;
  let a: string;
  let b: string;
  let before: string[];

  const answers = async (): Promise<string[]> =>
    Promise.all(QUERIES.map(async (q) => (await get(server, q, { 'X-API-Key': key })).body));
  /**
   * The answers once the server serves the manifest on disk (it polls the
   * manifest): waits for its generation, not for the answers to change, so
   * that a reload that changes nothing is waited for too.
   */
  async function reloaded(): Promise<string[]> {
    const generation = manifest(data).generation;
    await until(`the server serves manifest generation ${generation}`,
      async () => (await metric(server, 'rrscan_shard_generation')) === generation);
    return answers();
  }

  beforeAll(async () => {
    src = temp.fresh();
    data = path.join(temp.fresh(), 'data');
    a = ndjson(src, 'a.ndjson', [rec('one', 1), rec('two', 2)]);
    b = ndjson(src, 'b.ndjson', [rec('two', 5), rec('three', 3)]);
    ingest(data, [a]);
    key = addKey(data);
    server = await startServer(data, ['--metrics-port', '0']);
    before = await answers();
  }, 30_000);

  afterAll(() => server?.close());

  it('the ledger is in the shard entry: digest, absolute path, size, time', () => {
    const [entry] = manifest(data).shards;
    expect(entry!.inputs).toEqual([{ sha256: expect.stringMatching(/^[0-9a-f]{64}$/), name: a, bytes: readFileSync(a).length,
      at: entry!.createdAt }]);
  });

  it('a file ingested again is skipped with one stderr line; exit 0; the manifest and every answer stay', async () => {
    const m = readFileSync(path.join(data, 'manifest.json'), 'utf8');
    const r = ingest(data, [a]);
    expect(r.stderr).toBe(skipLine(a, sha(data, a)!, `shard ${manifest(data).shards[0]!.file}`));
    expect(r.stdout).toMatch(/^ingest: 1 file\(s\) \(1 skipped: already ingested\), 0 records read, 0 RRsets written in 0 shard\(s\)/);
    expect(readFileSync(path.join(data, 'manifest.json'), 'utf8')).toBe(m);
    expect(await answers()).toEqual(before);
    expect(objects(before[0]!).map((o) => (o as { count: number }).count)).toEqual([1, 2]);
  });

  it('a copy under another name is the same input; with a new file in the run, only the new one is ingested', async () => {
    const copy = path.join(temp.fresh(), 'renamed.ndjson');
    copyFileSync(a, copy);
    const shard = manifest(data).shards[0]!.file;
    const r = ingest(data, [copy, b]);
    expect(r.stderr).toBe(skipLine(copy, sha(data, a)!, `shard ${shard}`));
    expect(r.stdout).toMatch(/^ingest: 2 file\(s\) \(1 skipped: already ingested\), 2 records read, 2 RRsets written in 1 shard\(s\)/);
    const got = await reloaded();
    expect(objects(got[0]!).map((o) => [(o as { rrname: string }).rrname, (o as { count: number }).count])).toEqual([
      ['one.ledger.example.', 1], ['three.ledger.example.', 3], ['two.ledger.example.', 7]]);
    before = got;
  });

  it('the same file twice in one run is ingested once', async () => {
    const c = ndjson(src, 'c.ndjson', [rec('four', 4)]);
    const r = ingest(data, [c, c]);
    expect(r.stderr).toBe(skipLine(c, sha(data, c)!, `earlier in this run as ${c}`));
    expect(r.stdout).toMatch(/^ingest: 2 file\(s\) \(1 skipped: already ingested\), 1 records read, 1 RRsets written/);
    const got = await reloaded();
    expect(objects(got[0]!).find((o) => (o as { rrname: string }).rrname === 'four.ledger.example.')).toMatchObject({ count: 4 });
    before = got;
  });

  it('a changed file (same name, other bytes) is ingested', async () => {
    const c = path.join(src, 'c.ndjson');
    const old = sha(data, c);
    ndjson(src, 'c.ndjson', [rec('four', 10)]);
    const r = ingest(data, [c]);
    expect(r.stderr).toBe('');
    expect(manifest(data).shards.flatMap((s) => s.inputs ?? []).filter((i) => i.name === c).map((i) => i.sha256))
      .toEqual([old, expect.not.stringMatching(old!)]);
    const got = await reloaded();
    expect(objects(got[0]!).find((o) => (o as { rrname: string }).rrname === 'four.ledger.example.')).toMatchObject({ count: 14 });
    before = got;
  });

  it('the ledger survives `rrscan compact`: one entry per file, on the merged shard; re-ingest still skipped', async () => {
    const digests = manifest(data).shards.flatMap((s) => s.inputs ?? []).map((i) => i.sha256).sort();
    expect(digests).toHaveLength(4);
    const c = cli(['compact', '--data', data]);
    expect(c.code, c.stderr).toBe(0);
    const m = manifest(data);
    expect(m.shards).toHaveLength(1);
    expect(m.shards[0]!.inputs!.map((i) => i.sha256).sort()).toEqual(digests);
    // Compaction changes no answer (a reload of the merged shard answers as the two did).
    expect(await reloaded()).toEqual(before);
    const r = ingest(data, [a, b]);
    expect(r.stderr).toBe(skipLine(a, sha(data, a)!, `shard ${m.shards[0]!.file}`) +
      skipLine(b, sha(data, b)!, `shard ${m.shards[0]!.file}`));
    expect(await answers()).toEqual(before);
  });

  it('--again ingests a recorded file anyway: its sightings count twice', async () => {
    const r = ingest(data, [a], ['--again']);
    expect(r.stderr).toBe('');
    const got = await reloaded();
    expect(objects(got[0]!).find((o) => (o as { rrname: string }).rrname === 'one.ledger.example.')).toMatchObject({ count: 2 });
    // Recorded twice until a merge folds the two into one record.
    expect(manifest(data).shards.flatMap((s) => s.inputs ?? []).filter((i) => i.name === a)).toHaveLength(2);
    expect(cli(['compact', '--data', data]).code).toBe(0);
    expect(manifest(data).shards.flatMap((s) => s.inputs ?? []).filter((i) => i.name === a)).toHaveLength(1);
  });
});

describe('an ingest killed with SIGKILL mid-run', () => {
  it('publishes nothing; the re-run answers as one clean ingest; the next one skips the file', async () => {
    const src = temp.fresh();
    const lines: string[] = [];
    for (let i = 0; i < 200_000; i++) lines.push(JSON.stringify(rec(`k${i}.z${i % 53}`, 1 + (i % 3))));
    const file = path.join(src, 'big.ndjson');
    writeFileSync(file, lines.join('\n') + '\n');
    const [killed, clean] = [path.join(temp.fresh(), 'data'), path.join(temp.fresh(), 'data')];
    const flags = ['--workers', '1', '--memory-rrsets', '20000'];
    const proc = spawn(process.execPath, [BIN, 'ingest', '--data', killed, ...flags, file], { stdio: 'ignore' });
    const exited = new Promise<NodeJS.Signals | null>((r) => proc.once('exit', (_, signal) => r(signal)));
    // Killed once it has written its first shard and before it publishes (ten shards in all).
    const shards = () => (existsSync(killed) ? readdirSync(killed).filter((f) => f.endsWith('.rrs')).length : 0);
    await until('the ingest has written its first shard', () => shards() >= 2, 30_000, 5);
    proc.kill('SIGKILL');
    expect(await exited).toBe('SIGKILL');
    expect(existsSync(path.join(killed, 'manifest.json'))).toBe(false);

    ingest(killed, [file], flags);
    ingest(clean, [file], flags);
    const again = ingest(killed, [file]);
    expect(again.stderr).toMatch(/^rrscan ingest: \S+: already ingested \(sha256 [0-9a-f]{12}…, shard \S+\.rrs\); skipped\n$/);
    // Only the published shards are left: the killed run's files went with the re-run's swap.
    expect(readdirSync(killed).filter((f) => f.endsWith('.rrs')).sort()).toEqual(manifest(killed).shards.map((e) => e.file).sort());
    const keys = [addKey(killed), addKey(clean)];
    const servers = await Promise.all([startServer(killed), startServer(clean)]);
    try {
      for (const q of [...QUERIES, '/pdns/v2/lookup/rrset/name/k77.z24.ledger.example.', '/pdns/v2/regex/rrnames/k1999[0-9]%5C.']) {
        const [a, b] = await Promise.all(servers.map((sv, i) => get(sv, `${q}${q.includes('?') ? '&' : '?'}limit=1000`,
          { 'X-API-Key': keys[i]! })));
        expect(a!.status, q).toBe(200);
        expect(answer(a!), q).toBe(answer(b!));
        expect(a!.body, q).toContain('"obj"');
      }
    } finally {
      await Promise.all(servers.map((sv) => sv.close()));
    }
  }, 120_000);
});

describe('a file that grows while it is ingested', () => {
  it('fails the run, naming the file; nothing is published', async () => {
    const src = temp.fresh();
    const lines: string[] = [];
    for (let i = 0; i < 150_000; i++) lines.push(JSON.stringify(rec(`g${i}`, 1)));
    const file = path.join(src, 'growing.ndjson');
    writeFileSync(file, lines.join('\n') + '\n');
    const data = path.join(temp.fresh(), 'data');
    const proc = spawn(process.execPath, [BIN, 'ingest', '--data', data, '--workers', '1', '--memory-rrsets', '20000', file],
      { stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    proc.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    const code = new Promise<number | null>((r) => proc.once('close', r));
    // Appended once the run is past hashing and into reading (its first shard is written).
    await until('the ingest has written its first shard', () => existsSync(data) && readdirSync(data).some((f) => f.endsWith('.rrs')),
      30_000, 5);
    appendFileSync(file, JSON.stringify(rec('late', 1)) + '\n');
    expect(await code).toBe(1);
    expect(stderr).toMatch(new RegExp(`^rrscan ingest: ${file}: changed while it was ingested \\(\\d+ bytes when hashed, \\d+ now\\); ` +
      'ingest it once it is complete; nothing was published\n$'));
    expect(existsSync(path.join(data, 'manifest.json'))).toBe(false);
    expect(readdirSync(data).filter((f) => f.endsWith('.rrs'))).toEqual([]);
  }, 60_000);
});

describe('the ledger at its bound', () => {
  it(`keeps ${LIMITS.ledgerInputsMax} files: the run past it forgets the oldest and says so`, () => {
    const data = temp.fresh();
    // A manifest whose ledger is full (its shard is never opened by ingest): records made at T0 + i.
    const inputs = Array.from({ length: LIMITS.ledgerInputsMax }, (_, i) => ({ sha256: i.toString(16).padStart(64, '0'),
      name: `/old/${i}`, bytes: 1, at: T0 + i }));
    writeFileSync(path.join(data, 'manifest.json'), JSON.stringify({ version: 1, generation: 1,
      shards: [{ file: 'full.rrs', rrsets: 1, bytes: 1, createdAt: T0, source: 'test', inputs }] }));
    const file = ndjson(temp.fresh(), 'new.ndjson', [rec('new', 1)]);
    const r = cli(['ingest', '--data', data, file]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(`rrscan ingest: WARNING: the input ledger keeps ${LIMITS.ledgerInputsMax} files; it forgot the 1 ingested ` +
      `longest ago (up to ${new Date(T0 * 1000).toISOString()}): given again, those would be ingested again\n`);
    const kept = manifest(data).shards.flatMap((e) => e.inputs ?? []);
    expect(kept).toHaveLength(LIMITS.ledgerInputsMax);
    expect(kept.some((i) => i.name === '/old/0')).toBe(false);
    expect(kept.some((i) => i.name === file)).toBe(true);
  });
});
