// The same data served from 40 shards and from 1 ("One box, 100 million
// RRsets" issue): a search's answer must not depend on how the data is cut
// into shards. Ingest spills a shard every few thousand RRsets (40 of them,
// many values held by several), compaction merges a copy into one; two real
// servers then answer 400 generated flexible searches and 400 lookups (every
// pattern class, exclude, rrtype filters, time fences, limit and offset) and
// must agree byte for byte, keep-alives aside. Flexible searches run one
// scan task per value range over every shard and merge in the worker
// (flex-scan.ts), lookups merge per shard on the front end: both are
// compared here.

import { cpSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { differentialData, flexPaths, lookupPaths } from '../fixtures/differential-dataset.js';
import { differences, ndjsonFilesBeside } from '../helpers/differential.js';
import { addKey, cliOk, removeDir, startServer, tempPaths, type Server } from '../helpers/rrscan.js';

const RRSETS = 80_000;
const SPILL_RRSETS = 2_500;
const SEED = 23;

const paths = tempPaths();
let many: Server;
let one: Server;
let key: string;
const data = differentialData(RRSETS, SEED);
const shardsIn = (dir: string): number =>
  (JSON.parse(readFileSync(`${dir}/manifest.json`, 'utf8')) as { shards: unknown[] }).shards.length;

beforeAll(async () => {
  const dir = paths.fresh();
  const files = ndjsonFilesBeside(dir, data.files);
  for (const f of files) cliOk(['ingest', '--data', dir, '--memory-rrsets', String(SPILL_RRSETS), '--workers', '1', f]);
  files.forEach((f) => removeDir(f));
  key = addKey(dir, ['--unlimited']);
  const merged = paths.fresh();
  cpSync(dir, merged, { recursive: true });
  cliOk(['compact', '--data', merged, '--workers', '1']);
  expect(shardsIn(dir)).toBeGreaterThanOrEqual(40);
  expect(shardsIn(merged)).toBe(1);
  [many, one] = await Promise.all([startServer(dir), startServer(merged)]);
}, 180_000);

afterAll(async () => {
  await Promise.all([many?.close(), one?.close()]);
  paths.removeAll();
});

describe('the same data in 40 shards and in 1', () => {
  it('gets byte-identical answers to 400 generated flexible searches', async () => {
    expect(await differences(one, many, flexPaths(data, 400, SEED + 1), { 'X-API-Key': key })).toEqual([]);
  }, 180_000);

  it('gets byte-identical answers to 400 generated lookups', async () => {
    expect(await differences(one, many, lookupPaths(data, 400, SEED + 2), { 'X-API-Key': key })).toEqual([]);
  }, 180_000);
});
