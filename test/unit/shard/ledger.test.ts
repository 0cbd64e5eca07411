// The input ledger's rules (src/shard/ledger.ts) on real runs and merges: a
// run's files are recorded once, on its last shard; a merge of any subset of
// shards carries the union; the bound forgets the oldest; a run whose input
// another run published meanwhile publishes nothing. And the manifest size
// and parse time at the bound, which the front end pays at each reload.

import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { ingestFiles } from '../../../src/ingest/run.js';
import { mergeShards } from '../../../src/shard/compactor.js';
import { WriterLock } from '../../../src/shard/file-lock.js';
import { boundLedger, ledgerOf, mergedInputs } from '../../../src/shard/ledger.js';
import { readManifest, type InputRecord, type ShardEntry } from '../../../src/shard/manifest.js';
import { ShardSpiller } from '../../../src/shard/shard-spiller.js';
import { tempPaths } from '../../helpers/rrscan.js';

const temp = tempPaths();
afterAll(temp.removeAll);

function ndjson(dir: string, name: string, from: number, to: number): string {
  const lines: string[] = [];
  for (let i = from; i < to; i++) {
    lines.push(JSON.stringify({ count: 1, time_first: 1_700_000_000, time_last: 1_700_000_100, rrname: `h${i}.ledger.test.`, rrtype: 'A',
      rdata: [`10.0.${(i >> 8) & 255}.${i & 255}`] }));
  }
  const file = path.join(dir, name);
  writeFileSync(file, lines.join('\n') + '\n');
  return file;
}

const input = (sha: string, at: number): InputRecord => ({ sha256: sha.repeat(64).slice(0, 64), name: `/in/${sha}`, bytes: 1, at });
const entry = (file: string, inputs?: InputRecord[]): ShardEntry =>
  ({ file, rrsets: 1, bytes: 1, createdAt: 0, source: 'test', ...(inputs ? { inputs } : {}) });
const digests = (shards: readonly ShardEntry[]) => shards.map((s) => (s.inputs ?? []).map((i) => i.sha256[0]).join(''));

describe('the input ledger', () => {
  it('a run that spills several shards records its files once, on the last; merges of any subset keep them', async () => {
    const src = temp.fresh();
    const dir = path.join(temp.fresh(), 'data');
    const files = [ndjson(src, 'a.ndjson', 0, 250), ndjson(src, 'b.ndjson', 250, 500)];
    const s = await ingestFiles(files, { dataDir: dir, format: 'auto', maxErrors: 0, memoryRrsets: 100, threads: 1 });
    expect(s.shards).toHaveLength(5);
    const shards = readManifest(dir).shards;
    expect(shards.map((e) => e.inputs?.length ?? 0)).toEqual([0, 0, 0, 0, 2]);
    const recorded = [...ledgerOf(readManifest(dir)).keys()].sort();
    // The run's first shards merged alone, then the last one with the result: the ledger stays whole throughout.
    await mergeShards(dir, shards.slice(0, 3));
    expect([...ledgerOf(readManifest(dir)).keys()].sort()).toEqual(recorded);
    await mergeShards(dir, readManifest(dir).shards.slice(1));
    const m = readManifest(dir);
    expect([...ledgerOf(m).keys()].sort()).toEqual(recorded);
    expect(m.shards.flatMap((e) => e.inputs ?? [])).toHaveLength(2);
  });

  it('a run whose input another run published while it ran publishes nothing (IngestedMeanwhileError)', async () => {
    const src = temp.fresh();
    const dir = path.join(temp.fresh(), 'data');
    const file = ndjson(src, 'a.ndjson', 0, 10);
    await ingestFiles([file], { dataDir: dir, format: 'auto', maxErrors: 0 });
    const before = readManifest(dir);
    const writer = WriterLock.acquire(dir);
    const spiller = new ShardSpiller(dir, 'late run', 1, 100, writer.id);
    try {
      await spiller.add({ rrname: 'x.ledger.test.', rrtype: 1, bailiwick: 'ledger.test.', rdata: [], count: 1, timeFirst: 1, timeLast: 2,
        zoneTimeFirst: 0, zoneTimeLast: 0 });
      const recorded = before.shards[0]!.inputs![0]!;
      await expect(spiller.publish({ inputs: [recorded], again: false })).rejects.toMatchObject({
        code: 'INGESTED_MEANWHILE',
        message: `${file}: ingested by another run while this one ran (sha256 ${recorded.sha256.slice(0, 12)}…, ` +
          `shard ${before.shards[0]!.file}); nothing was published; run again to skip it`,
      });
      await spiller.abort();
    } finally {
      writer.release();
    }
    expect(readManifest(dir)).toEqual(before);
  });

  it('mergedInputs: one record per digest, its latest ingest', () => {
    expect(mergedInputs([entry('x', [input('a', 5), input('b', 1)]), entry('y'), entry('z', [input('a', 9)])]))
      .toEqual([input('a', 9), input('b', 1)]);
  });

  it('boundLedger forgets the oldest records (ties by digest), dropping emptied lists', () => {
    const shards = [entry('x', [input('c', 3), input('a', 1)]), entry('y', [input('b', 1)]), entry('z', [input('d', 4)])];
    expect(boundLedger(shards, 4)).toEqual({ shards, forgotten: 0 });
    const cut = boundLedger(shards, 2);
    expect(cut).toMatchObject({ forgotten: 2, newestForgotten: 1 });
    expect(digests(cut.shards)).toEqual(['c', '', 'd']);
    expect(cut.shards[1]).toEqual(entry('y'));
  });

  it(`at the bound (${LIMITS.ledgerInputsMax} records), the manifest stays a few MB and parses in a few ms`, () => {
    const shards = Array.from({ length: LIMITS.ledgerInputsMax / 100 }, (_, s) => entry(`shard-${s}.rrs`,
      Array.from({ length: 100 }, (__, i) => ({ sha256: (s * 100 + i).toString(16).padStart(64, '0'),
        name: `/var/spool/dnscap/sensor-03/2026/11/25/dnscap-${s * 100 + i}.pcap`.padEnd(60, 'x'), bytes: 123_456_789, at: 1_764_040_000 }))));
    const text = JSON.stringify({ version: 1, generation: 1, shards }, null, 2);
    const t0 = performance.now();
    for (let i = 0; i < 10; i++) JSON.parse(text);
    const ms = (performance.now() - t0) / 10;
    console.log(`ledger at its bound: manifest ${(text.length / 2 ** 20).toFixed(1)} MiB, JSON.parse ${ms.toFixed(1)} ms`);
    expect(text.length).toBeLessThan(3 * 2 ** 20);
  });
});
