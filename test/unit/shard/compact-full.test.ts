// compact() (src/shard/compactor.ts), the full compaction behind `rrscan
// compact`: it merges every shard, unless the shards are already what it
// would write (no owner name in two shards, none larger than a merge writes,
// no more of them than a merge would write); then it leaves them, rather
// than rewrite the whole data set to the same shards.
import { closeSync, openSync, readdirSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { demoObservations } from '../../../src/demo/generate.js';
import { ingestObservations } from '../../../src/ingest/run.js';
import { compact } from '../../../src/shard/compactor.js';
import { readManifest } from '../../../src/shard/manifest.js';
import { readVerified } from '../../../src/shard/verified.js';
import { tempPaths } from '../../helpers/rrscan.js';

const temp = tempPaths();
afterAll(temp.removeAll);

const shardFiles = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.rrs')).sort();
const mtimes = (dir: string) => shardFiles(dir).map((f) => statSync(path.join(dir, f)).mtimeMs);

describe('compact', () => {
  it('leaves shards that a full compaction wrote as they are, and merges again once a new shard overlaps them', async () => {
    const dir = temp.fresh();
    for (const seed of [1, 2]) await ingestObservations(demoObservations({ records: 3_000, seed }), dir, `seed ${seed}`);
    const first = await compact(dir, { shardRrsetsMax: 2_000 });
    expect(first.alreadyCompact).toBeUndefined();
    expect(first.outputShards).toBe(Math.ceil(first.rrsetsOut / 2_000));
    const written = readManifest(dir);
    const times = mtimes(dir);

    const again = await compact(dir, { shardRrsetsMax: 2_000 });
    expect(again).toMatchObject({
      alreadyCompact: true, inputShards: written.shards.length, outputShards: written.shards.length,
      rrsetsIn: first.rrsetsOut, rrsetsOut: first.rrsetsOut, seconds: 0,
    });
    expect(readManifest(dir)).toEqual(written);
    expect(mtimes(dir)).toEqual(times);
    // It verified them to decide, and recorded so, as a server does: the next run reads only their ends.
    expect([...readVerified(dir).keys()].sort()).toEqual(shardFiles(dir));

    // Bigger output shards: a merge would write fewer, so it merges.
    const bigger = await compact(dir, { shardRrsetsMax: 4_000 });
    expect(bigger.alreadyCompact).toBeUndefined();
    expect(bigger.outputShards).toBe(Math.ceil(first.rrsetsOut / 4_000));

    // A new shard of names the others hold: RRsets to aggregate, so it merges.
    await ingestObservations(demoObservations({ records: 3_000, seed: 1 }), dir, 'seed 1 again');
    const overlapping = await compact(dir, { shardRrsetsMax: 4_000 });
    expect(overlapping.alreadyCompact).toBeUndefined();
    expect(overlapping).toMatchObject({ inputShards: bigger.outputShards + 1, rrsetsOut: first.rrsetsOut });
  });

  it('does not take a damaged shard for compact: the merge it runs instead refuses it, and nothing changes', async () => {
    const dir = temp.fresh();
    for (const seed of [1, 2]) await ingestObservations(demoObservations({ records: 3_000, seed }), dir, `seed ${seed}`);
    await compact(dir, { shardRrsetsMax: 2_000 });
    const written = readManifest(dir);
    // Bytes overwritten in the middle of a shard no server has recorded as verified (the record is gone).
    rmSync(path.join(dir, 'verified.json'), { force: true });
    const victim = path.join(dir, written.shards[1]!.file);
    const fd = openSync(victim, 'r+');
    writeSync(fd, Buffer.alloc(64, 0x5a), 0, 64, Math.floor(statSync(victim).size / 2));
    closeSync(fd);
    await expect(compact(dir, { shardRrsetsMax: 2_000 })).rejects.toMatchObject({ code: 'SHARD_CORRUPT' });
    expect(readManifest(dir)).toEqual(written);
    expect(shardFiles(dir)).toEqual(written.shards.map((e) => e.file).sort());
  });

  it('merges shards with disjoint names while fewer shards would hold them', async () => {
    const dir = temp.fresh();
    for (const seed of [1, 2]) await ingestObservations(demoObservations({ records: 500, seed }), dir, `seed ${seed}`);
    const s = await compact(dir, { shardRrsetsMax: 2_000 });
    expect(s.alreadyCompact).toBeUndefined();
    expect(s.outputShards).toBe(1);
  });
});
