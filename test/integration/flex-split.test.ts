// A flexible search that reads every value (a pattern the trigram index
// cannot narrow) is cut by value into one range per scan thread once the
// shards hold LIMITS.scanSplitRecordsMin values a range (flex-plan.ts
// rangesOf); each range is a task of its own and the front end joins their
// answers. The answer must not depend on that cut: the same demo data
// served with two scan threads (two ranges) and with one (one range) must
// give byte-identical answers, keep-alives aside, to full scans of every
// kind, with limits and offsets that end before, at and past the cut,
// exclude, rrtype filters and time fences. The other differential tests'
// data sets are too small to be cut.

import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { blobLength, blobRecord } from '../../src/shard/blob.js';
import { ShardReader } from '../../src/shard/shard-reader.js';
import { differences } from '../helpers/differential.js';
import { addKey, cliOk, startServer, tempPaths, type Server } from '../helpers/rrscan.js';

/** Enough for 2 x scanSplitRecordsMin names and rdata values (checked below). */
const RRSETS = 1_200_000;

const paths = tempPaths();
let two: Server;
let one: Server;
let key: string;
const around: { names: string[]; rdata: string[] } = { names: [], rdata: [] };

beforeAll(async () => {
  const dir = paths.fresh();
  cliOk(['demo', '--data', dir, '--rrsets', String(RRSETS)]);
  const shards = readdirSync(dir).filter((f) => f.endsWith('.rrs')).map((f) => ShardReader.open(path.join(dir, f)));
  for (const [cols, out] of [['flexNames', around.names], ['flexRdata', around.rdata]] as const) {
    const values = shards.reduce((n, s) => n + blobLength(s[cols]), 0);
    // Otherwise every search below is one range on both servers, and this test compares nothing new.
    expect(values).toBeGreaterThanOrEqual(2 * LIMITS.scanSplitRecordsMin);
    // Values either side of the cut (the biggest shard's median, flex-plan.ts), for patterns that start there.
    const big = shards.reduce((a, b) => (blobLength(b[cols]) > blobLength(a[cols]) ? b : a))[cols];
    const mid = Math.floor(blobLength(big) / 2);
    out.push(blobRecord(big, mid - 1), blobRecord(big, mid), blobRecord(big, mid + 1));
  }
  key = addKey(dir, ['--unlimited']);
  [two, one] = await Promise.all([startServer(dir, ['--workers', '2']), startServer(dir, ['--workers', '1'])]);
}, 240_000);

afterAll(async () => {
  await Promise.all([two?.close(), one?.close()]);
  paths.removeAll();
});

/** Regexes and globs with no trigram to narrow by: every value is read. */
const FULL_SCANS: [method: string, pattern: string][] = [
  ['regex', '.'], ['regex', '^[a-f]'], ['regex', '^[n-z]'], ['regex', '\\d{2}'], ['regex', '^.{1,4}\\.'], ['regex', '[a-z]-[a-z]'],
  ['glob', '*'], ['glob', '?a*'], ['glob', '*-*'],
];

const PARAMS = [
  '', 'limit=1', 'limit=10000', 'limit=250000', 'offset=9990&limit=20', 'offset=200000&limit=100',
  'exclude=%5Ba-m%5D', 'time_first_after=1600000000', 'time_last_before=1500000000&limit=5000',
];

function searches(): string[] {
  const out: string[] = [];
  for (const target of ['rrnames', 'rdata']) {
    for (const [method, pattern] of FULL_SCANS) {
      for (const params of PARAMS) {
        const p = `${method}/${target}/${encodeURIComponent(pattern)}`;
        out.push(params === '' ? p : `${p}?${params}`);
      }
      out.push(`${method}/${target}/${encodeURIComponent(pattern)}/${target === 'rrnames' ? 'A' : 'NS'}?limit=20000`);
    }
  }
  // Values at the cut: the first range's last matches and the second's first.
  for (const v of around.names) out.push(`regex/rrnames/${encodeURIComponent(`^${v.slice(0, 2)}`)}?limit=100000`);
  for (const v of around.rdata) out.push(`regex/rdata/${encodeURIComponent(`^${v.slice(0, 1)}`)}?limit=100000`);
  return out;
}

describe('a full scan cut into value ranges', () => {
  it('answers as one range does, byte for byte', async () => {
    expect(await differences(one, two, searches(), { 'X-API-Key': key })).toEqual([]);
  }, 600_000);
});
