// A full disk, for real (README: "a failed run (bad input past --max-errors,
// full disk) publishes nothing"; the product promise: a full disk never takes
// the server down or loses data). Ingest and compact that run out of space
// publish nothing, leave no temp file and say so on one line; a server whose
// data directory and key store fill up keeps answering, refuses only what it
// cannot account for, and accounts again once space is back.
//
// How: a small tmpfs mounted in a private mount namespace (`unshare -m` as
// root, `unshare -Urm` otherwise), so the host's mounts never change and the
// mount goes away with the test. A holder process keeps the namespace alive
// (it waits on a pipe from this process, so it also dies with it); the rrscan
// CLI and server run inside through `nsenter -t PID -m` (the network
// namespace is shared, so 127.0.0.1 works), and this process reaches the same
// files through /proc/PID/root to fill the disk and compare bytes. The rrscan
// processes cannot use that path: SQLite resolves symbolic links in a
// database path, and /proc/PID/root is one.
//
// The disk is filled with a plain file down to an exact number of free pages
// (tmpfs charges whole pages to file data and nothing to directory entries),
// so each failure lands on the write it is meant to hit: the shard, part-way
// through; the manifest lock; the new manifest. Sizes are measured, not
// assumed: the shard a run will write is first written on the ordinary disk.
//
// The live receiver (`ingest --listen`) runs inside too, and dnstap senders
// reach it over TCP; its flushes fail and are retried until there is room,
// and what it published is read back from the shards and compared with a
// file ingest of the same frames.
//
// Where the machine cannot make such a mount (no unshare or nsenter, no
// permission), every test here skips and says why.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync, readFileSync, readdirSync, rmSync, statfsSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readManifest } from '../../src/shard/manifest.js';
import { openShard } from '../../src/shard/shard-reader.js';
import { shardRrsets } from '../../src/shard/shard-rrsets.js';
import { answer, DNSTAP, FrameSender, START, STOP, startReceiver, waitFor, type Receiver } from '../helpers/live-ingest.js';
import { begin, body, cli, get, ok, startServer, tempPaths, type CliResult, type Server } from '../helpers/rrscan.js';
import { cat, control } from '../unit/ingest/wire-fixtures.js';

const temp = tempPaths();
afterAll(temp.removeAll);

const PAGE = 4096;
const isRoot = process.getuid?.() === 0;
const UNSHARE = isRoot ? ['-m'] : ['-Urm'];
const NSENTER = isRoot ? ['-m'] : ['-U', '-m'];

/** A tmpfs of `kb` KiB at `dir`, seen only inside the holder's mount namespace. */
class TinyDisk {
  /** The path inside the namespace: what the rrscan processes are given. */
  readonly dir: string;
  /** The same directory from this process. */
  readonly outside: string;
  /** Runs a command inside the namespace (helpers' cli/startServer prefix). */
  readonly inside: string[];
  private readonly filler: string;

  private constructor(private readonly holder: ChildProcess, dir: string) {
    this.dir = dir;
    this.outside = `/proc/${holder.pid}/root${dir}`;
    this.inside = ['nsenter', '-t', String(holder.pid), ...NSENTER];
    this.filler = path.join(this.outside, 'filler');
  }

  static async mount(kb: number): Promise<TinyDisk> {
    const dir = path.join(temp.fresh(), 'disk');
    mkdirSync(dir);
    const script = `mount -t tmpfs -o size=${kb}k tmpfs "$1" && echo mounted && exec cat >/dev/null`;
    const holder = spawn('unshare', [...UNSHARE, 'sh', '-c', script, 'sh', dir], { stdio: ['pipe', 'pipe', 'pipe'] });
    await new Promise<void>((resolve, reject) => {
      let err = '';
      holder.stderr.on('data', (d: Buffer) => { err += d.toString(); });
      holder.stdout.once('data', () => resolve());
      holder.once('error', reject);
      holder.once('exit', (code) => reject(new Error(`unshare ${UNSHARE.join(' ')} exited ${code}: ${err.trim()}`)));
    });
    return new TinyDisk(holder, dir);
  }

  /** Free pages of the file system. */
  freePages(): number {
    return Number(statfsSync(this.outside).bavail);
  }

  /** Fills the disk with one file until exactly `pages` pages are free. */
  fill(pages: number): void {
    this.free();
    let bytes = (this.freePages() - pages) * PAGE;
    if (bytes < 0) throw new Error(`only ${this.freePages()} pages free, wanted ${pages}: the disk is too small for the fixture`);
    const fd = openSync(this.filler, 'w');
    try {
      const zeros = Buffer.alloc(1 << 20);
      while (bytes > 0) bytes -= writeSync(fd, zeros, 0, Math.min(bytes, zeros.length));
    } finally {
      closeSync(fd);
    }
    expect(this.freePages()).toBe(pages);
  }

  /** Deletes the filler: space is back. */
  free(): void {
    rmSync(this.filler, { force: true });
  }

  close(): void {
    // Only our own holder, by its pid: the mount goes with its namespace.
    this.holder.stdin!.end();
    if (this.holder.exitCode === null) this.holder.kill('SIGKILL');
  }
}

/** Why a full disk cannot be made here, or '' when it can (mount, enter, and see the files from outside). */
async function whyNoTinyDisk(): Promise<string> {
  for (const tool of ['unshare', 'nsenter']) {
    if (spawnSync(tool, ['--version']).status !== 0) return `${tool} is not available`;
  }
  let disk: TinyDisk | undefined;
  try {
    disk = await TinyDisk.mount(64);
    const probe = spawnSync(disk.inside[0]!, [...disk.inside.slice(1), 'sh', '-c', 'echo x > "$1"/probe', 'sh', disk.dir],
      { encoding: 'utf8' });
    if (probe.status !== 0) return `nsenter ${NSENTER.join(' ')} failed: ${probe.stderr.trim()}`;
    if (readFileSync(path.join(disk.outside, 'probe'), 'utf8') !== 'x\n') return 'the tmpfs is not visible through /proc/PID/root';
    if (statfsSync(disk.outside).blocks > 64 * 1024 / PAGE) return 'the tmpfs size limit did not apply';
    return '';
  } catch (err) {
    return `cannot mount a tmpfs in a private mount namespace: ${(err as Error).message}`;
  } finally {
    disk?.close();
  }
}

const SKIP = await whyNoTinyDisk();
if (SKIP) console.warn(`full-disk.test.ts: skipped: ${SKIP}`);

// ---- data ----

const record = (rrname: string, ip: string) =>
  ({ count: 1, time_first: 1_700_000_000, time_last: 1_700_000_100, rrname, rrtype: 'A', bailiwick: 'example.', rdata: [ip] });
const ip = (i: number, net: string) => `${net}.${(i >> 8) & 255}.${i & 255}`;
/** `count` names under `zone`, as NDJSON in a file on the ordinary disk (every mount namespace sees it). */
function ndjson(zone: string, count: number, net: string): string {
  const file = path.join(temp.fresh(), `${zone}ndjson`);
  const lines: string[] = [];
  for (let i = 0; i < count; i++) lines.push(JSON.stringify(record(`h${i}.${zone}`, ip(i, net))));
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const lookupPath = (name: string) => `/pdns/v2/lookup/rrset/name/${name}/A`;
/** The exact body of a lookup of name number `i` of `zone`. */
const lookupBody = (zone: string, i: number, net: string) => body(begin, { obj: record(`h${i}.${zone}`, ip(i, net)) }, ok);
const OVERLOADED = 'Error: Server is overloaded, try again later\n';

/**
 * Every file of a directory and its bytes, but the manifest lock: a flock on
 * a file that stays, whose text (the last holder's pid) is only a note.
 */
function snapshot(dir: string): Record<string, Buffer> {
  return Object.fromEntries(readdirSync(dir).filter((f) => f !== 'manifest.lock').sort()
    .map((f) => [f, readFileSync(path.join(dir, f))]));
}

/** Files a run must not leave: temp files and writer locks (a clean exit removes its own). */
const leftovers = (files: string[]) => files.filter((f) => f.endsWith('.tmp') || f.startsWith('.writer-'));

/** Pages the one shard file in `dir` takes. */
function shardPages(dir: string): number {
  const shards = readdirSync(dir).filter((f) => f.endsWith('.rrs'));
  expect(shards).toHaveLength(1);
  return Math.ceil(readFileSync(path.join(dir, shards[0]!)).length / PAGE);
}

function expectOk(r: CliResult): void {
  expect(r.code, `${r.stdout}\n${r.stderr}`).toBe(0);
}

function keyOf(r: CliResult): string {
  expectOk(r);
  return r.stdout.trim().split('\n').pop()!.trim();
}

// The writes a publishing run makes, in order, and how many free pages make exactly that one fail.
interface Shortage {
  what: string;
  /** Free pages, given the pages the new shard takes. */
  pages: (shard: number) => number;
  /** The `(writing ...)` part of the message. */
  writing: RegExp;
}
// The manifest lock takes no space: it is a flock on a file that the first
// run created and that stays (its pid note is rewritten in place).
const SHORTAGES: Shortage[] = [
  { what: 'no room for the new shard (the write stops part-way)', pages: () => 16, writing: /shard \d{10}-[0-9a-f]{12}-[0-9a-f]{12}\.rrs/ },
  { what: 'room for the shard, none for the new manifest', pages: (s) => s, writing: /manifest\.json/ },
];

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

describe.skipIf(SKIP !== '')('rrscan ingest on a full disk', () => {
  const FIRST = 'first.example.';
  const SECOND = 'second.example.';
  let disk: TinyDisk;
  let data: string;
  let second: string;
  let secondPages: number;
  let key: string;
  let before: Record<string, Buffer>;

  beforeAll(async () => {
    disk = await TinyDisk.mount(2048);
    data = path.join(disk.dir, 'data');
    expectOk(cli(['ingest', '--data', data, ndjson(FIRST, 200, '10.1')], {}, disk.inside));
    key = keyOf(cli(['keys', 'add', '--data', data, '--unlimited'], {}, disk.inside));
    second = ndjson(SECOND, 2000, '10.2');
    // The shard the second run will write, measured on the ordinary disk.
    const measure = temp.fresh();
    expectOk(cli(['ingest', '--data', measure, second]));
    secondPages = shardPages(measure);
    expect(secondPages).toBeGreaterThan(SHORTAGES[0]!.pages(0) + 1);
    before = snapshot(path.join(disk.outside, 'data'));
    expect(Object.keys(before).filter((f) => f.endsWith('.rrs'))).toHaveLength(1);
  });

  afterAll(() => disk?.close());

  it.each(SHORTAGES)('$what: exit 1, one line naming the condition and the directory, nothing changed', (s) => {
    disk.fill(s.pages(secondPages));
    const r = cli(['ingest', '--data', data, second], {}, disk.inside);
    disk.free();
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^rrscan ingest: ${escape(data)}: no space left on device \\(writing ${s.writing.source}\\); ` +
      'nothing was published\\n$'));
    // Manifest, first shard and key store byte for byte; no temp file, writer lock or new shard beside them.
    expect(snapshot(path.join(disk.outside, 'data'))).toEqual(before);
  });

  it('a server started afterwards serves the first data', async () => {
    const server = await startServer(data, [], {}, disk.inside);
    try {
      const r = await get(server, lookupPath(`h7.${FIRST}`), { 'X-API-Key': key });
      expect(r.status).toBe(200);
      expect(r.body).toBe(lookupBody(FIRST, 7, '10.1'));
    } finally {
      await server.close();
    }
  });

  it('once there is room, the same ingest publishes at once (no stale lock to wait out)', () => {
    const t = performance.now();
    const r = cli(['ingest', '--data', data, second], {}, disk.inside);
    expectOk(r);
    expect(performance.now() - t).toBeLessThan(10_000);
    const after = snapshot(path.join(disk.outside, 'data'));
    expect(Object.keys(after).filter((f) => f.endsWith('.rrs'))).toHaveLength(2);
    expect(leftovers(Object.keys(after))).toEqual([]);
  });
});

describe.skipIf(SKIP !== '')('rrscan compact on a full disk', () => {
  const ONE = 'one.example.';
  const TWO = 'two.example.';
  let disk: TinyDisk;
  let data: string;
  let mergedPages: number;
  let key: string;
  let before: Record<string, Buffer>;

  beforeAll(async () => {
    disk = await TinyDisk.mount(2048);
    data = path.join(disk.dir, 'data');
    const one = ndjson(ONE, 1000, '10.3');
    const two = ndjson(TWO, 1000, '10.4');
    expectOk(cli(['ingest', '--data', data, one], {}, disk.inside));
    expectOk(cli(['ingest', '--data', data, two], {}, disk.inside));
    key = keyOf(cli(['keys', 'add', '--data', data, '--unlimited'], {}, disk.inside));
    // The merged shard, measured by compacting the same two inputs on the ordinary disk.
    const measure = temp.fresh();
    expectOk(cli(['ingest', '--data', measure, one]));
    expectOk(cli(['ingest', '--data', measure, two]));
    expectOk(cli(['compact', '--data', measure]));
    mergedPages = shardPages(measure);
    expect(mergedPages).toBeGreaterThan(SHORTAGES[0]!.pages(0) + 1);
    before = snapshot(path.join(disk.outside, 'data'));
    expect(Object.keys(before).filter((f) => f.endsWith('.rrs'))).toHaveLength(2);
  });

  afterAll(() => disk?.close());

  it.each(SHORTAGES)('$what: exit 1, one line naming the condition and the directory, nothing changed', (s) => {
    disk.fill(s.pages(mergedPages));
    const r = cli(['compact', '--data', data], {}, disk.inside);
    disk.free();
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(new RegExp(`^rrscan compact: ${escape(data)}: no space left on device \\(writing ${s.writing.source}\\); ` +
      'the shards were left as they were\\n$'));
    expect(snapshot(path.join(disk.outside, 'data'))).toEqual(before);
  });

  it('a server started afterwards serves both shards; with room, compaction then succeeds', async () => {
    const server = await startServer(data, [], {}, disk.inside);
    try {
      const H = { 'X-API-Key': key };
      expect((await get(server, lookupPath(`h5.${ONE}`), H)).body).toBe(lookupBody(ONE, 5, '10.3'));
      expect((await get(server, lookupPath(`h999.${TWO}`), H)).body).toBe(lookupBody(TWO, 999, '10.4'));
    } finally {
      await server.close();
    }
    const r = cli(['compact', '--data', data], {}, disk.inside);
    expectOk(r);
    expect(r.stdout).toMatch(/^compact: 2 shard\(s\), 2000 RRsets in -> 1 shard\(s\), 2000 RRsets/);
    const after = readdirSync(path.join(disk.outside, 'data'));
    expect(after.filter((f) => f.endsWith('.rrs'))).toHaveLength(1);
    expect(leftovers(after)).toEqual([]);
  });
});

describe.skipIf(SKIP !== '')('rrscan serve while its disk fills up', () => {
  const ZONE = 'served.example.';
  let disk: TinyDisk;
  let data: string;
  let server: Server;
  /** Unlimited: nothing to commit per request (usage is counted in memory and flushed later). */
  let unlimited: Record<string, string>;
  /** A block of 100: every lookup must commit its charge before it is answered. */
  let block: Record<string, string>;
  const blockRate = (remaining: number) =>
    JSON.stringify({ rate: { reset: 'n/a', expires: 'n/a', limit: 100, remaining, results_max: 10000, offset_max: 100000 } }) + '\n';
  const totalUsed = (k: string) =>
    /^total_used: (\d+)$/m.exec(cli(['keys', 'show', '--data', data, k], {}, disk.inside).stdout)?.[1];

  beforeAll(async () => {
    disk = await TinyDisk.mount(1024);
    data = path.join(disk.dir, 'data');
    expectOk(cli(['ingest', '--data', data, ndjson(ZONE, 200, '10.5')], {}, disk.inside));
    unlimited = { 'X-API-Key': keyOf(cli(['keys', 'add', '--data', data, '--unlimited'], {}, disk.inside)) };
    block = { 'X-API-Key': keyOf(cli(['keys', 'add', '--data', data, '--block', '100'], {}, disk.inside)) };
    server = await startServer(data, [], {}, disk.inside);
  });

  afterAll(async () => {
    await server?.close();
    disk?.close();
  });

  it('answers ping, lookups, flexible search and rate_limit; refuses a charge it cannot commit with 503; then accounts again', async () => {
    const lookup = lookupPath(`h7.${ZONE}`);
    const found = lookupBody(ZONE, 7, '10.5');
    const first = await get(server, lookup, block);
    expect(first.status).toBe(200);
    expect(first.headers['x-ratelimit-remaining']).toBe('99');

    disk.fill(0);
    expect((await get(server, '/pdns/v2/ping')).body).toBe('{"ping":"ok"}\n');
    for (let i = 0; i < 3; i++) {
      const r = await get(server, lookup, unlimited);
      expect(r.status).toBe(200);
      expect(r.body).toBe(found);
    }
    const flex = await get(server, `/pdns/v2/glob/rrnames/h7.${ZONE}`, unlimited);
    expect(flex.status).toBe(200);
    expect(flex.body).toBe(body(begin, { obj: { rrname: `h7.${ZONE}`, rrtype: 'A' } }, ok));
    // The block key's charge cannot be committed, and no answer goes out
    // before its charge: 503 with the catalogue text, which clients retry; not 500, not a crash.
    for (let i = 0; i < 3; i++) {
      const refused = await get(server, lookup, block);
      expect(refused.status).toBe(503);
      expect(refused.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(refused.body).toBe(OVERLOADED);
    }
    // Reading the committed quota needs no space; the refusals cost nothing.
    const rate = await get(server, '/pdns/v2/rate_limit', block);
    expect(rate.status).toBe(200);
    expect(rate.body).toBe(blockRate(99));
    expect(server.proc.exitCode).toBe(null);

    disk.free();
    const again = await get(server, lookup, block);
    expect(again.status).toBe(200);
    expect(again.body).toBe(found);
    expect(again.headers['x-ratelimit-remaining']).toBe('98');
    expect((await get(server, '/pdns/v2/rate_limit', block)).body).toBe(blockRate(98));
    // The unlimited key's three lookups and one search, counted in memory
    // while the disk was full, reach the store once it has room
    // (LIMITS.usageFlushIntervalMs: 1 s).
    const deadline = Date.now() + 10_000;
    while (totalUsed(unlimited['X-API-Key']!) !== '4' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(totalUsed(unlimited['X-API-Key']!)).toBe('4');

    // The operator is told why, in the log; nothing went unhandled.
    expect(server.stderr()).toContain('"code":"SQLITE_FULL"');
    expect(server.stderr()).toContain('"msg":"request refused"');
    expect(server.stderr()).not.toMatch(/unhandled|uncaught/i);
  });

  it('shuts down cleanly on SIGTERM while the disk is full', async () => {
    await get(server, lookupPath(`h1.${ZONE}`), unlimited); // usage the shutdown cannot write
    disk.fill(0);
    const exited = new Promise<number | null>((r) => server.proc.once('exit', (code) => r(code)));
    server.proc.kill('SIGTERM');
    expect(await exited).toBe(0);
    disk.free();
    expect(server.stderr()).not.toMatch(/unhandled|uncaught/i);
  });
});

// ---- the live receiver ----

/** `count` dnstap frames, one RRset each, named `<tag><i>.live.test.`. */
const frames = (tag: string, count: number, net: string) =>
  Array.from({ length: count }, (_, i) => answer(`${tag}${i}.live.test.`, ip(i, net)));

/**
 * Every RRset the manifest of `dir` lists, read with the shard reader, as
 * sorted JSON lines; an RRset found in several shards once, its counts
 * summed and its times widened, as a search merges them.
 */
function publishedRrsets(dir: string): string[] {
  const byKey = new Map<string, { rrname: string; rrtype: number; bailiwick: string; rdata: string[]; count: number;
    timeFirst: number; timeLast: number }>();
  for (const e of readManifest(dir).shards) {
    for (const { key, rrset: o } of shardRrsets(openShard(path.join(dir, e.file)))) {
      const seen = byKey.get(key);
      if (seen === undefined) {
        byKey.set(key, { rrname: o.rrname, rrtype: o.rrtype, bailiwick: o.bailiwick, rdata: o.rdata.map((r) => r.text),
          count: o.count, timeFirst: o.timeFirst, timeLast: o.timeLast });
      } else {
        seen.count += o.count;
        seen.timeFirst = Math.min(seen.timeFirst, o.timeFirst);
        seen.timeLast = Math.max(seen.timeLast, o.timeLast);
      }
    }
  }
  return [...byKey.values()].map((v) => JSON.stringify(v)).sort();
}

/** What a file ingest of `sent` publishes: the frames as one dnstap file (START, frames, STOP), ingested on the ordinary disk. */
function fileIngested(sent: Uint8Array[]): string[] {
  const dir = temp.fresh();
  const file = path.join(dir, 'sent.fstrm');
  writeFileSync(file, cat([control(START, DNSTAP), ...sent, control(STOP)]));
  expectOk(cli(['ingest', '--data', path.join(dir, 'data'), file]));
  return publishedRrsets(path.join(dir, 'data'));
}

async function send(address: string, batches: Uint8Array[][]): Promise<void> {
  const s = await FrameSender.connect(address);
  await s.handshake();
  for (const b of batches) await s.write(cat(b));
  await s.finish(); // FINISH: the receiver has taken every frame
}

/** Reads one series of a receiver started with --metrics-port 0. */
function metrics(r: Receiver): (name: string) => Promise<number> {
  const url = /^rrscan metrics at (http:\/\/\S+) /m.exec(r.stdout())![1]!;
  return async (name) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(await (await fetch(url)).text())![1]);
}

const logged = (r: Receiver, event: string) => r.logs().filter((l) => l['event'] === event);
const lastLogged = (r: Receiver, event: string) => waitFor(`a ${event} log line`, () => logged(r, event).at(-1), 20_000);

describe.skipIf(SKIP !== '')('rrscan ingest --listen on a full disk', () => {
  let disk: TinyDisk;
  /** Published by a file ingest into each test's data directory first: the manifest lock then exists, as in a running service. */
  const first = frames('first', 10, '10.7');
  let firstFile: string;

  /** A data directory on the small disk, `first` published in it. */
  function prepared(name: string): string {
    const dir = path.join(disk.dir, name);
    expectOk(cli(['ingest', '--data', dir, firstFile], {}, disk.inside));
    return dir;
  }

  beforeAll(async () => {
    disk = await TinyDisk.mount(4096);
    firstFile = path.join(temp.fresh(), 'first.fstrm');
    writeFileSync(firstFile, cat([control(START, DNSTAP), ...first, control(STOP)]));
  });

  afterAll(() => disk?.close());

  it('a flush that cannot write its shard keeps its RRsets; once there is room a retry publishes every one', async () => {
    const data = prepared('retry');
    const r = await startReceiver(data, ['tcp:127.0.0.1:0'], ['--flush-seconds', '1', '--compact', 'off', '--metrics-port', '0'],
      disk.inside);
    const metric = metrics(r);
    const sent = frames('retry', 2000, '10.8');
    try {
      // No page free: a tick may flush any part of what has come, and every such shard must fail.
      disk.fill(0);
      // Four writes; a tick among them flushes what has come so far, and fails.
      await send(r.addresses[0]!, [0, 1, 2, 3].map((q) => sent.slice(q * 500, (q + 1) * 500)));
      const failed = await lastLogged(r, 'flush-failed');
      expect(failed['err']).toMatch(/no space left on device \(writing shard \d{10}-[0-9a-f]{12}-[0-9a-f]{12}\.rrs\)/);
      expect(failed['msg']).toBe('flush failed; its RRsets are kept and it will retry (before newer data)');
      // Retried at every tick, and failing: counted each time, the RRsets waiting visible, none lost.
      await waitFor('three failed attempts', async () => ((await metric('rrscan_ingest_flushes_failed_total')) >= 3 ? true : undefined));
      const waiting = await metric('rrscan_ingest_retry_rrsets');
      expect(waiting).toBeGreaterThan(0);
      expect(waiting).toBeLessThanOrEqual(2000);
      expect(await metric('rrscan_ingest_lost_rrsets_total')).toBe(0);
      expect(await metric('rrscan_ingest_published_rrsets_total')).toBe(0);
      expect(readManifest(path.join(disk.outside, 'retry')).shards).toHaveLength(1); // the file ingest's only
      expect(r.proc.exitCode).toBe(null);

      disk.free();
      await waitFor('every RRset published',
        async () => ((await metric('rrscan_ingest_published_rrsets_total')) === 2000 ? true : undefined));
      expect(logged(r, 'flush').filter((l) => l['retry'] === true).length).toBeGreaterThanOrEqual(1);
      expect(await metric('rrscan_ingest_retry_rrsets')).toBe(0);
      expect(await metric('rrscan_ingest_lost_rrsets_total')).toBe(0);
    } finally {
      disk.free();
      expect(await r.stop()).toBe(0);
    }
    expect(r.stdout()).toMatch(/ingest: stopped; 1 sender\(s\), 2000 frames, 2000 RRsets published in \d+ shard\(s\)/);
    expect(r.stderr()).not.toMatch(/RRsets lost|unhandled|uncaught/i);
    const published = publishedRrsets(path.join(disk.outside, 'retry'));
    expect(published).toHaveLength(2010);
    expect(published).toEqual(fileIngested([...first, ...sent]));
    expect(leftovers(readdirSync(path.join(disk.outside, 'retry')))).toEqual([]);
  }, 90_000);

  it('while a failed flush is held the next budget fills, then the senders pause: two budgets at most, nothing lost', async () => {
    const data = prepared('pause');
    const r = await startReceiver(data, ['tcp:127.0.0.1:0'],
      ['--flush-seconds', '1', '--memory-rrsets', '200', '--compact', 'off', '--metrics-port', '0'], disk.inside);
    const metric = metrics(r);
    const sent = frames('pause', 1000, '10.11');
    const s = await FrameSender.connect(r.addresses[0]!);
    try {
      await s.handshake();
      disk.fill(0);
      await s.write(cat(sent));
      await lastLogged(r, 'flush-failed');
      await waitFor('the senders to pause', () =>
        r.logs().find((l) => l['msg'] === 'memory budget reached: senders paused until the flush is done'));
      // Paused: however long the disk stays full, the receiver reads no further than the failed flush and one budget.
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      const taken = await metric('rrscan_ingest_records_total');
      const waiting = await metric('rrscan_ingest_retry_rrsets');
      expect(waiting).toBeGreaterThan(0);
      expect(taken - waiting).toBe(200);
      expect(taken).toBeLessThanOrEqual(400);
      expect(await metric('rrscan_ingest_flushes_failed_total')).toBeGreaterThanOrEqual(2);
      expect(await metric('rrscan_ingest_lost_rrsets_total')).toBe(0);

      disk.free();
      await s.finish(30_000); // resumed: every frame taken
      await waitFor('every RRset published',
        async () => ((await metric('rrscan_ingest_published_rrsets_total')) === 1000 ? true : undefined));
      expect(r.logs().some((l) => l['msg'] === 'senders resumed')).toBe(true);
    } finally {
      disk.free();
      s.socket.destroy();
      expect(await r.stop()).toBe(0);
    }
    expect(publishedRrsets(path.join(disk.outside, 'pause'))).toEqual(fileIngested([...first, ...sent]));
  }, 90_000);

  it('a flush whose shard is written but whose manifest swap fails keeps the file and retries only the swap', async () => {
    // One flush of exactly 500 RRsets (--memory-rrsets), retried by its backoff (LIMITS.liveFlushRetryMs), not a tick.
    const flags = ['--flush-seconds', '3600', '--memory-rrsets', '500', '--compact', 'off'];
    const sent = frames('swap', 500, '10.9');
    // The shard that flush writes, measured by the same flush on the ordinary disk.
    const measure = path.join(temp.fresh(), 'data');
    const m = await startReceiver(measure, ['tcp:127.0.0.1:0'], flags);
    try {
      await send(m.addresses[0]!, [sent]);
      await lastLogged(m, 'flush');
    } finally {
      expect(await m.stop()).toBe(0);
    }
    const pages = shardPages(measure);

    const data = prepared('swap');
    const outside = path.join(disk.outside, 'swap');
    const r = await startReceiver(data, ['tcp:127.0.0.1:0'], flags, disk.inside);
    let kept: string[];
    try {
      disk.fill(SHORTAGES[1]!.pages(pages));
      await send(r.addresses[0]!, [sent]);
      const failed = await lastLogged(r, 'flush-failed');
      expect(failed['err']).toMatch(/no space left on device \(writing manifest\.json\)/);
      expect(failed['rrsets']).toBe(500);
      // The written shard stays, unlisted, for the retry.
      const listed = readManifest(outside).shards.map((e) => e.file);
      kept = readdirSync(outside).filter((f) => f.endsWith('.rrs') && !listed.includes(f));
      expect(kept).toHaveLength(1);
      disk.free();
      const retried = await lastLogged(r, 'flush');
      expect(retried).toMatchObject({ retry: true, rrsets: 500, shards: kept });
    } finally {
      disk.free();
      expect(await r.stop()).toBe(0);
    }
    expect(readManifest(outside).shards.map((e) => e.file)).toContain(kept[0]);
    expect(publishedRrsets(outside)).toEqual(fileIngested([...first, ...sent]));
    expect(leftovers(readdirSync(outside))).toEqual([]);
  }, 90_000);

  it('SIGTERM while the disk stays full: one last try, then the RRsets are logged as lost and the exit is 1', async () => {
    const data = prepared('lost');
    const outside = path.join(disk.outside, 'lost');
    const before = snapshot(outside);
    const r = await startReceiver(data, ['tcp:127.0.0.1:0'], ['--flush-seconds', '1', '--compact', 'off'], disk.inside);
    let code: number | null;
    try {
      disk.fill(0);
      await send(r.addresses[0]!, [frames('lost', 300, '10.10')]);
      await lastLogged(r, 'flush-failed');
      code = await r.stop();
    } finally {
      disk.free();
      await r.stop();
    }
    expect(code).toBe(1);
    const stopped = r.logs().find((l) => l['msg'] === 'receiver stopped')!;
    const published = stopped['published'] as Record<string, number>;
    expect(published).toMatchObject({ rrsets: 0, retryRrsets: 0, lostRrsets: 300 });
    // Every failed try but the last said it would retry; the last, at shutdown, lost the RRsets, once.
    expect(published['failedFlushes']).toBe(logged(r, 'flush-failed').length + 1);
    expect(logged(r, 'flush-lost')).toEqual([expect.objectContaining({ level: 50, reason: 'shutdown', lostRrsets: 300 })]);
    expect(r.stderr()).toContain(`rrscan ingest: 300 RRsets lost (${published['failedFlushes']} flush attempt(s) failed)\n`);
    // What was published before is untouched, and nothing was left behind.
    expect(snapshot(outside)).toEqual(before);
  }, 90_000);
});
