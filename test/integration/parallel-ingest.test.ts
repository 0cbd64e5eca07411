// Parallel NDJSON ingest (src/ingest/parallel.ts): a file cut into ranges of
// lines, one thread each, must serve exactly what a one-thread ingest of the
// same file serves, and must fail, skip and number bad lines the same way.
// Parallel compaction (src/shard/compactor.ts) likewise against one thread.
import { cpSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { IngestError } from '../../src/errors/catalogue.js';
import { ingestFiles } from '../../src/ingest/run.js';
import { splitLines } from '../../src/lib/line-reader.js';
import { compact } from '../../src/shard/compactor.js';
import { addKey, answer, get, startServer, tempPaths, type Server } from '../helpers/rrscan.js';

const temp = tempPaths();
const fresh = temp.fresh;
afterAll(temp.removeAll);

const LINES = 3_000;

/** Line i (1-based) of the fixture: a distinct RRset, except that every 500th line repeats line 1's, so ranges share one. */
function line(i: number): string {
  const k = i % 500 === 0 ? 1 : i;
  const name = `h${k % 700}.zone${k % 7}.example.`;
  return k % 3 === 0
    ? JSON.stringify({ count: k, time_first: 1_500_000_000 + k, time_last: 1_600_000_000 + k, rrname: name, rrtype: 'NS',
      bailiwick: `zone${k % 7}.example.`, rdata: [`ns${k % 50}.example.net.`, `ns${k}.example.net.`] })
    : JSON.stringify({ count: 1, time_first: 1_500_000_000 + k, time_last: 1_600_000_000 + k, rrname: name, rrtype: 'A',
      bailiwick: `zone${k % 7}.example.`, rdata: `10.0.${(k >> 8) & 255}.${k & 255}` });
}

function writeFixture(dir: string, bad: ReadonlyMap<number, string> = new Map()): string {
  const file = path.join(dir, '..', `${path.basename(dir)}.ndjson`);
  const out: string[] = [];
  for (let i = 1; i <= LINES; i++) out.push(bad.get(i) ?? line(i));
  writeFileSync(file, out.join('\n') + '\n');
  temp.keep(file);
  return file;
}

const shardFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.rrs'));

describe('splitLines', () => {
  it('cuts just after an LF, covers the file once, and gives a one-line file one range', async () => {
    const d = fresh();
    const file = writeFixture(d);
    const ranges = await splitLines(file, 4);
    expect(ranges).toHaveLength(4);
    const text = (await import('node:fs')).readFileSync(file);
    expect(ranges[0]!.start).toBe(0);
    for (let i = 1; i < ranges.length; i++) {
      expect(ranges[i]!.start).toBe(ranges[i - 1]!.end);
      expect(text[ranges[i]!.start - 1]).toBe(0x0a);
    }
    expect(ranges.at(-1)!.end).toBe(text.length);
    const one = path.join(d, '..', `${path.basename(d)}-one.ndjson`);
    writeFileSync(one, line(1));
    temp.keep(one);
    expect(await splitLines(one, 4)).toEqual([{ start: 0, end: line(1).length }]);
  });
});

describe('parallel NDJSON ingest', () => {
  let serial: Server;
  let parallel: Server;
  let serialKey: string;
  let parallelKey: string;
  let serialShards: string[];
  let parallelShards: string[];
  const summaries: Awaited<ReturnType<typeof ingestFiles>>[] = [];

  beforeAll(async () => {
    const a = fresh();
    const b = fresh();
    const file = writeFixture(a);
    summaries.push(await ingestFiles([file], { dataDir: a, format: 'ndjson', maxErrors: 0, threads: 1 }));
    summaries.push(await ingestFiles([file], { dataDir: b, format: 'ndjson', maxErrors: 0, threads: 3, parallelBytesMin: 0 }));
    serialShards = shardFiles(a);
    parallelShards = shardFiles(b);
    serialKey = addKey(a);
    parallelKey = addKey(b);
    [serial, parallel] = await Promise.all([startServer(a), startServer(b)]);
  }, 120_000);
  afterAll(async () => {
    await Promise.all([serial?.close(), parallel?.close()]);
  });

  it('writes one shard per range and reads every line once', () => {
    const [one, three] = summaries;
    expect(serialShards).toHaveLength(1);
    expect(parallelShards).toHaveLength(3);
    expect(three!.shards.sort()).toEqual(parallelShards.sort());
    expect([three!.records, three!.observations, three!.rejected]).toEqual([one!.records, one!.observations, 0]);
    expect(one!.observations).toBe(LINES);
    // Line 1's RRset repeats in every range, so ranges hold it once each.
    expect(three!.rrsets).toBe(one!.rrsets + 2);
  });

  it('serves the same bodies as a one-thread ingest', async () => {
    for (const q of [
      '/pdns/v2/lookup/rrset/name/*.example./ANY?limit=0',
      '/pdns/v2/lookup/rrset/name/h1.zone1.example.',
      '/pdns/v2/lookup/rdata/name/ns7.example.net.?limit=0',
      '/pdns/v2/lookup/rdata/name/*.example.net./NS?limit=0',
      '/pdns/v2/summarize/rrset/name/*.zone3.example.',
      '/pdns/v2/regex/rrnames/^h1[0-9]*%5C.zone[12]%5C.?limit=0',
    ]) {
      const [x, y] = await Promise.all([get(serial, q, { 'X-API-Key': serialKey }), get(parallel, q, { 'X-API-Key': parallelKey })]);
      expect(x.status, q).toBe(200);
      expect(answer(y), q).toBe(answer(x));
      expect(x.body.split('\n').length, q).toBeGreaterThan(3);
    }
  });
});

describe('bad lines in a parallel ingest', () => {
  const bad = new Map([[10, 'not json'], [1_500, '{"rrname":"x.example.","rrtype":"A","rdata":"300.1.1.1"}'], [2_990, '[1,2']]);

  it('names the line counted from the start of the file, and publishes nothing', async () => {
    const d = fresh();
    const file = writeFixture(d, new Map([[2_990, 'not json']]));
    const err = await ingestFiles([file], { dataDir: d, format: 'ndjson', maxErrors: 0, threads: 3, parallelBytesMin: 0 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IngestError);
    expect((err as IngestError).message).toBe(`${file}: line 2990: not valid JSON`);
    expect(readdirSync(d)).toEqual([]);
  });

  it('skips and counts up to --max-errors over all ranges, reporting each line', async () => {
    const d = fresh();
    const file = writeFixture(d, bad);
    const skipped: string[] = [];
    const s = await ingestFiles([file], {
      dataDir: d, format: 'ndjson', maxErrors: 3, threads: 3, parallelBytesMin: 0, onReject: (e) => skipped.push(e.message),
    });
    expect(s.rejected).toBe(3);
    expect(s.observations).toBe(LINES - 3);
    expect(skipped.map((m) => /^(.*): (line \d+):/.exec(m)!.slice(1))).toEqual([[file, 'line 10'], [file, 'line 1500'], [file, 'line 2990']]);
  });

  it('fails when the file holds one bad line more than --max-errors, leaving no shard behind', async () => {
    const d = fresh();
    const file = writeFixture(d, bad);
    const err = await ingestFiles([file], { dataDir: d, format: 'ndjson', maxErrors: 2, threads: 3, parallelBytesMin: 0 })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(IngestError);
    expect(shardFiles(d)).toEqual([]);
  });
});

describe('parallel compaction', () => {
  const QUERIES = [
    '/pdns/v2/lookup/rrset/name/*.example./ANY?limit=0',
    '/pdns/v2/lookup/rdata/name/*.example.net./NS?limit=0',
    '/pdns/v2/lookup/rdata/ip/10.0.0.0,16?limit=0',
    '/pdns/v2/regex/rrnames/zone[35]%5C.?limit=0',
  ];

  it('merges owner ranges on several threads into disjoint shards that serve what one thread\'s output serves', async () => {
    const base = fresh();
    // Three shards that share line 1's RRset, as in the ingest tests above.
    await ingestFiles([writeFixture(base)], { dataDir: base, format: 'ndjson', maxErrors: 0, threads: 3, parallelBytesMin: 0 });
    const one = fresh();
    const three = fresh();
    cpSync(base, one, { recursive: true });
    cpSync(base, three, { recursive: true });
    const a = await compact(one, { threads: 1 });
    const b = await compact(three, { threads: 3, parallelRrsetsMin: 0 });
    expect([a.inputShards, a.outputShards, b.inputShards, b.outputShards]).toEqual([3, 1, 3, 3]);
    expect(b.rrsetsIn).toBe(a.rrsetsIn);
    expect(b.rrsetsOut).toBe(a.rrsetsOut);
    expect(a.rrsetsOut).toBe(a.rrsetsIn - 2);
    expect(shardFiles(three)).toHaveLength(3);
    const keys = [addKey(base), addKey(one), addKey(three)];
    const servers = await Promise.all([startServer(base), startServer(one), startServer(three)]);
    try {
      for (const q of QUERIES) {
        const [x, y, z] = await Promise.all(servers.map((s, i) => get(s, q, { 'X-API-Key': keys[i]! })));
        expect(x!.status, q).toBe(200);
        expect(x!.body.split('\n').length, q).toBeGreaterThan(3);
        expect(answer(y!), q).toBe(answer(x!));
        expect(answer(z!), q).toBe(answer(x!));
      }
    } finally {
      await Promise.all(servers.map((s) => s.close()));
    }
  }, 120_000);
});
