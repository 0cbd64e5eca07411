// Shard files damaged under a running `rrscan serve` ("Damaged files, odd
// clients, upgrades" issue), over HTTP against real server processes, with
// real damage: `truncate` of a mapped shard, 4 KB overwritten in place at
// several places, a corrupt shard at start-up, a manifest entry that is a
// path, and the same under `--processes 2`. What must hold each time: the
// process survives; every answer is either right, or right without the
// damaged shard (which is then quarantined: logged, counted, named in
// /readyz), or ends `failed`; never `succeeded` with rows missing or blank;
// a good copy renamed in is served again; nothing needs a restart.

import {
  closeSync, copyFileSync, cpSync, openSync, readFileSync, renameSync, statSync, truncateSync, writeFileSync, writeSync,
} from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { STREAM_MESSAGES } from '../../src/errors/catalogue.js';
import {
  addKey, begin, body, get, ingestNdjson, lines, metric, ok, startServer, tempPaths, until, type Reply, type Server,
} from '../helpers/rrscan.js';

const PER_SHARD = 2_000;
const BIG_PER_SHARD = 250_000;
const DAMAGED = { cond: 'failed', msg: STREAM_MESSAGES.DATA_DAMAGED };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// Shard a holds a*.damage.example. -> 10.1.x.y, shard b holds b*... -> 10.2.x.y.
const record = (shard: 'a' | 'b', i: number) => ({
  count: 1, time_first: 1_600_000_000, time_last: 1_600_000_000 + i, rrname: `${shard}${i}.damage.example.`, rrtype: 'A',
  bailiwick: 'example.', rdata: [`10.${shard === 'a' ? 1 : 2}.${(i >> 8) & 255}.${i & 255}`],
});

const paths = tempPaths();
/** Two small shards (a, b) and a key, written once; each test serves a copy. */
let pristine: string;
let pristineBig: string;
let key: Record<string, string>;
let keyBig: Record<string, string>;

beforeAll(() => {
  pristine = paths.fresh();
  ingestNdjson(pristine, Array.from({ length: PER_SHARD }, (_, i) => record('a', i)), 'a.ndjson');
  ingestNdjson(pristine, Array.from({ length: PER_SHARD }, (_, i) => record('b', i)), 'b.ndjson');
  key = { 'X-API-Key': addKey(pristine, ['--unlimited', '--results-max', '1000000']) };
  pristineBig = paths.fresh();
  ingestNdjson(pristineBig, Array.from({ length: BIG_PER_SHARD }, (_, i) => record('a', i)), 'a.ndjson');
  ingestNdjson(pristineBig, Array.from({ length: BIG_PER_SHARD }, (_, i) => record('b', i)), 'b.ndjson');
  keyBig = { 'X-API-Key': addKey(pristineBig, ['--unlimited', '--results-max', '1000000']) };
}, 120_000);

afterAll(() => paths.removeAll());

/**
 * A fresh copy of a pristine directory, its shard files in manifest order (a's first; the small fixture
 * has one shard of each, the big one two, as ingest cuts a file of 32 MiB or more) and pristine copies of them.
 */
function copyOf(from: string): { dir: string; files: [string, string]; saved: [string, string] } {
  const dir = paths.fresh();
  cpSync(from, dir, { recursive: true });
  const files = (JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { shards: { file: string }[] }).shards
    .map((s) => s.file) as [string, string];
  const saved = files.map((f) => paths.keep(`${dir}-${f}`)) as [string, string];
  files.forEach((f, i) => copyFileSync(path.join(dir, f), saved[i]!));
  return { dir, files, saved };
}

function overwrite(file: string, offsets: readonly number[]): void {
  const fd = openSync(file, 'r+');
  try {
    for (const at of offsets) writeSync(fd, Buffer.alloc(4096, 0xaa), 0, 4096, at);
  } finally {
    closeSync(fd);
  }
}

const readyz = (server: Server) => get({ port: server.metricsPort! }, '/readyz');

/** Waits until the server has verified the shards it started with (/readyz stops saying `verifying`). */
async function verified(server: Server): Promise<void> {
  await until('the shards are verified', async () => !(await readyz(server)).body.startsWith('not ready: verifying'));
}

/** rdata ip lookup of a /24 held by `shard`: the exact body when the shard is served. */
const subnet = (shard: 'a' | 'b') => `/pdns/v2/lookup/rdata/ip/10.${shard === 'a' ? 1 : 2}.3.0,24`;
function subnetBody(shard: 'a' | 'b'): string {
  const rows = Array.from({ length: 256 }, (_, k) => 3 * 256 + k).filter((i) => i < PER_SHARD).map((i) => {
    const r = record(shard, i);
    return { obj: { count: 1, time_first: r.time_first, time_last: r.time_last, rrname: r.rrname, rrtype: 'A', rdata: r.rdata[0] } };
  });
  return body(begin, ...rows, ok);
}
const NONE = body(begin, { cond: 'succeeded', msg: STREAM_MESSAGES.NO_RESULTS });

/** Asserts an answer that is right, right without the damaged shard, or failed with the damage message. */
function rightOrFailed(r: Reply, right: string): void {
  expect(r.status).toBe(200);
  if (r.body === right || r.body === NONE) return;
  const got = lines(r.body) as object[];
  expect(got.at(-1), r.body.slice(0, 300)).toEqual(DAMAGED);
  expect(right.startsWith(body(...got.slice(0, -1)))).toBe(true);
}

describe('a mapped shard truncated in place', () => {
  it('does not kill the server: a search reading it ends failed, and it is quarantined while the others serve', async () => {
    const { dir, files } = copyOf(pristineBig);
    const server = await startServer(dir, ['--metrics-port', '0', '--workers', '1']);
    try {
      // Every name: the a's (shard 0) come first, so the merge is still draining shard 0 while the reader is paused.
      let res!: http.IncomingMessage;
      const chunks: Buffer[] = [];
      const req = http.get({ port: server.port, host: '127.0.0.1', path: '/pdns/v2/regex/rrnames/damage?limit=0', headers: keyBig },
        (r) => { res = r; r.on('data', (c: Buffer) => chunks.push(c)); r.pause(); });
      await until('the search has begun', () => res !== undefined);
      await sleep(300);

      truncateSync(path.join(dir, files[0]), 4096);
      await until('the truncated shard is quarantined', () => server.stderr().includes('"msg":"shard quarantined'));
      res.resume();
      await new Promise<void>((resolve) => res.on('end', resolve));
      req.destroy();

      const got = lines(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>[];
      expect(got[0]).toEqual(begin);
      expect(got.at(-1)).toEqual(DAMAGED);
      // What came before the terminator is real rows in the answer's order: none blank, none invented.
      const names = got.slice(1, -1).filter((l) => 'obj' in l).map((l) => (l['obj'] as { rrname: string }).rrname);
      expect(names.length).toBeGreaterThan(0);
      const bad = names.filter((n, i) => !/^[ab](\d+)\.damage\.example\.$/.test(n) || Number(/\d+/.exec(n)![0]) >= BIG_PER_SHARD ||
        (i > 0 && names[i - 1]! >= n));
      expect(bad.slice(0, 5)).toEqual([]);
      // The paused scan read past the new end of the file: the fault was absorbed, not fatal.
      expect(await metric(server, 'rrscan_shard_faults_total')).toBeGreaterThanOrEqual(1);
      expect(server.proc.exitCode).toBeNull();

      expect(await metric(server, 'rrscan_shards_quarantined')).toBe(1);
      expect(await metric(server, 'rrscan_shards')).toBe(3);
      const ready = await readyz(server);
      expect(ready.status).toBe(200);
      expect(ready.body).toMatch(new RegExp(`^ready; degraded: 1 shard quarantined \\(${files[0]}: `));
      const logged = server.stderr().split('\n').filter((l) => l.includes('"msg":"shard quarantined'));
      expect(logged[0]).toContain(`"file":"${path.join(dir, files[0])}"`);
      // The other shard serves, exactly; the damaged one's rows are gone, not blank.
      expect((await get(server, '/pdns/v2/lookup/rrset/name/b7.damage.example./A', keyBig)).body).toBe(body(begin,
        { obj: { count: 1, time_first: 1_600_000_000, time_last: 1_600_000_007, rrname: 'b7.damage.example.', rrtype: 'A',
          bailiwick: 'example.', rdata: ['10.2.0.7'] } }, ok));
      // The a's were cut into two shards by line ranges: the first of them is gone, the second serves.
      expect((await get(server, '/pdns/v2/lookup/rrset/name/a7.damage.example./A', keyBig)).body).toBe(NONE);
      expect(lines((await get(server, `/pdns/v2/lookup/rrset/name/a${BIG_PER_SHARD - 1}.damage.example./A`, keyBig)).body))
        .toHaveLength(3);
    } finally {
      await server.close();
    }
  });
});

describe('a mapped shard overwritten in place', () => {
  it('is never served wrong: each answer is right, right without it, or failed; a good copy renamed in serves again', async () => {
    const { dir, files, saved } = copyOf(pristine);
    const server = await startServer(dir, ['--metrics-port', '0']);
    try {
      const right = subnetBody('a');
      expect((await get(server, subnet('a'), key)).body).toBe(right);
      const file = path.join(dir, files[0]);
      const size = statSync(file).size;
      overwrite(file, [8192, Math.floor(size / 3), Math.floor(size / 2), size - 8192]);
      // Hammer it while the change is found: no answer may be wrong.
      const seen = new Set<string>();
      for (const end = Date.now() + 1_500; Date.now() < end;) {
        const r = await get(server, subnet('a'), key);
        rightOrFailed(r, right);
        seen.add(r.body === right ? 'right' : r.body === NONE ? 'without' : 'failed');
      }
      expect(seen.has('without')).toBe(true);
      expect(await metric(server, 'rrscan_shards_quarantined')).toBe(1);
      expect((await readyz(server)).body).toBe(`ready; degraded: 1 shard quarantined (${files[0]}: ${file}: corrupt shard: ` +
        'body checksum mismatch)\n');
      expect((await get(server, subnet('b'), key)).body).toBe(subnetBody('b'));

      // Repaired: a good copy under a temp name, renamed over the damaged one (a new inode), and the manifest bumped.
      copyFileSync(saved[0], path.join(dir, '.repair.tmp'));
      renameSync(path.join(dir, '.repair.tmp'), file);
      const m = JSON.parse(readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as { generation: number };
      m.generation++;
      writeFileSync(path.join(dir, '.m.tmp'), JSON.stringify(m));
      renameSync(path.join(dir, '.m.tmp'), path.join(dir, 'manifest.json'));
      await until('the repaired shard serves', async () => (await get(server, subnet('a'), key)).body === right);
      expect(await metric(server, 'rrscan_shards_quarantined')).toBe(0);
      expect((await readyz(server)).body).toBe('ready\n');
    } finally {
      await server.close();
    }
  });
});

describe('a corrupt shard at start-up', () => {
  it('is quarantined and the healthy one serves', async () => {
    const { dir, files } = copyOf(pristine);
    overwrite(path.join(dir, files[1]), [4096]);
    const server = await startServer(dir, ['--metrics-port', '0']);
    try {
      await verified(server);
      expect((await get(server, subnet('a'), key)).body).toBe(subnetBody('a'));
      expect((await get(server, subnet('b'), key)).body).toBe(NONE);
      expect(await metric(server, 'rrscan_shards_quarantined')).toBe(1);
      const reason = `${path.join(dir, files[1])}: corrupt shard: body checksum mismatch`;
      expect((await readyz(server)).body).toBe(`ready; degraded: 1 shard quarantined (${files[1]}: ${reason})\n`);
      const logged = server.stderr().split('\n').filter((l) => l.includes('"msg":"shard quarantined'));
      expect(logged).toHaveLength(1);
      expect(JSON.parse(logged[0]!)).toMatchObject({ level: 50, file: path.join(dir, files[1]), reason });
    } finally {
      await server.close();
    }
  });
});

describe('a manifest entry that is a path', () => {
  it('is refused with a logged reason; searches go on; restoring the manifest is enough', async () => {
    const { dir, files } = copyOf(pristine);
    const server = await startServer(dir, ['--metrics-port', '0']);
    const manifest = path.join(dir, 'manifest.json');
    const swap = (text: string) => {
      writeFileSync(`${manifest}.tmp`, text);
      renameSync(`${manifest}.tmp`, manifest);
    };
    try {
      const good = readFileSync(manifest, 'utf8');
      const m = JSON.parse(good) as { generation: number; shards: { file: string }[] };
      m.generation++;
      m.shards[0]!.file = `./${m.shards[0]!.file}`;
      swap(JSON.stringify(m));
      await until('the manifest is refused', () => server.stderr().includes('"msg":"manifest refused; still serving the last good one"'));
      expect((await get(server, subnet('a'), key)).body).toBe(subnetBody('a'));
      const flex = await get(server, '/pdns/v2/regex/rrnames/^b1999%5C.', key);
      expect(flex.body).toBe(body(begin, { obj: { rrname: 'b1999.damage.example.', rrtype: 'A' } }, ok));
      const ready = await readyz(server);
      expect(ready.status).toBe(200);
      expect(ready.body).toBe(`ready; degraded: ${manifest}: manifest refused: shard 0: "./${files[0]}" is not a bare shard file ` +
        'name of the data directory; serving the last good manifest\n');

      const fixed = JSON.parse(good) as { generation: number };
      fixed.generation += 2;
      swap(JSON.stringify(fixed));
      await until('the manifest is accepted', async () => (await readyz(server)).body === 'ready\n');
      expect(await metric(server, 'rrscan_shard_generation')).toBe(fixed.generation);
      expect((await get(server, subnet('b'), key)).body).toBe(subnetBody('b'));
    } finally {
      await server.close();
    }
  });
});

describe('serve --processes 2', () => {
  it('survives a shard truncated under both members, and starts with a corrupt one', async () => {
    const { dir, files } = copyOf(pristine);
    overwrite(path.join(dir, files[1]), [4096]);
    const group = await startServer(dir, ['--processes', '2', '--metrics-port', '0']);
    try {
      await verified(group);
      expect((await readyz(group)).body).toMatch(new RegExp(`^ready; degraded: 1 shard quarantined \\(${files[1]}: `));
      truncateSync(path.join(dir, files[0]), 4096);
      for (let i = 0; i < 20; i++) rightOrFailed(await get(group, subnet('a'), key), subnetBody('a'));
      await until('both members quarantined it', async () => (await metric(group, 'rrscan_shards_quarantined')) === 2);
      expect(await metric(group, 'rrscan_group_member_restarts_total')).toBe(0);
      expect(await metric(group, 'rrscan_group_members_running')).toBe(2);
      expect(group.proc.exitCode).toBeNull();
      expect((await readyz(group)).status).toBe(503);
    } finally {
      await group.close();
    }
  });
});
