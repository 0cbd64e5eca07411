// The demo data set made on several threads (src/demo/parallel.ts, each
// thread keeping the owners that fall to it) is the data set one thread
// makes: the same RRsets with the same sightings, each in exactly one shard.
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ingestDemo } from '../../../src/demo/parallel.js';
import { partOf } from '../../../src/demo/demo-part.js';
import { LIMITS } from '../../../src/config/limits.js';
import { blobRecord } from '../../../src/shard/blob.js';
import { readManifest } from '../../../src/shard/manifest.js';
import { ShardReader } from '../../../src/shard/shard-reader.js';
import { tempPaths } from '../../helpers/rrscan.js';

const temp = tempPaths();
afterAll(temp.removeAll);

/** Every RRset of a directory's shards as one line (owner, type, bailiwick, records, sighting), with the shard it is in. */
function rrsetsOf(dir: string): { lines: string[]; shardOf: Map<string, number> } {
  const lines: string[] = [];
  const shardOf = new Map<string, number>();
  readManifest(dir).shards.forEach((e, k) => {
    const r = ShardReader.open(path.join(dir, e.file));
    const rs = r.rrsets;
    for (let o = 0; o + 1 < r.ownerStarts.length; o++) {
      const owner = blobRecord(r.owners, o);
      shardOf.set(owner, k);
      for (let i = r.ownerStarts[o]!; i < r.ownerStarts[o + 1]!; i++) {
        const texts: string[] = [];
        for (let j = rs.rdataStarts[i]!; j < rs.rdataStarts[i + 1]!; j++) texts.push(blobRecord(r.rdata.text, rs.rdataRows[j]!));
        lines.push(`${owner} ${rs.rrtype[i]} ${blobRecord(r.bailiwicks, rs.bailiwick[i]!)} ${texts.join('|')} ${rs.count[i]} ` +
          `${rs.timeFirst[i]} ${rs.timeLast[i]} ${rs.zoneTimeFirst[i]} ${rs.zoneTimeLast[i]}`);
      }
    }
  });
  return { lines: lines.sort(), shardOf };
}

describe('ingestDemo', () => {
  it('makes on two threads the RRsets one thread makes, each owner in the shard of its part', async () => {
    const records = LIMITS.demoParallelRrsetsMin;
    const one = temp.fresh(), two = temp.fresh();
    const a = await ingestDemo(one, records, 'demo', undefined, 1);
    const b = await ingestDemo(two, records, 'demo', undefined, 2);
    expect(a.shards).toHaveLength(1);
    expect(b.shards).toHaveLength(2);
    expect(b).toMatchObject({ rrsets: a.rrsets, records: a.records, observations: a.observations });
    const x = rrsetsOf(one), y = rrsetsOf(two);
    expect(y.lines.length).toBe(records);
    expect(y.lines).toEqual(x.lines);
    // Owners were stored reversed; partOf takes them as generated.
    for (const [owner, shard] of y.shardOf) {
      const name = `${owner.split('.').filter((l) => l !== '').reverse().join('.')}.`;
      expect(partOf(name === '.' ? owner : name, 2), owner).toBe(shard);
    }
    expect(readdirSync(two).filter((f) => f.endsWith('.rrs')).sort()).toEqual([...b.shards].sort());
  }, 120_000);
});
