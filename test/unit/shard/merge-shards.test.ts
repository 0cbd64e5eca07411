// mergeShards (src/shard/compactor.ts), the merge the background compactor
// runs: it replaces exactly its inputs, records the RRsets they stood for,
// refuses to publish when another compaction merged an input first (that
// would count its RRsets twice), and an aborted merge leaves nothing behind.
import { readdirSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { demoObservations } from '../../../src/demo/generate.js';
import { ingestObservations } from '../../../src/ingest/run.js';
import { mergeShards } from '../../../src/shard/compactor.js';
import { readManifest, updateManifest } from '../../../src/shard/manifest.js';
import { tempPaths } from '../../helpers/rrscan.js';

const temp = tempPaths();
afterAll(temp.removeAll);

/** A directory of three shards: demo seeds 1, 2 and 1 again (the third repeats the first). */
async function threeShards(records: number): Promise<string> {
  const dir = temp.fresh();
  for (const seed of [1, 2, 1]) await ingestObservations(demoObservations({ records, seed }), dir, `seed ${seed}`);
  return dir;
}

const files = (dir: string) => readdirSync(dir).filter((f) => !/^manifest\.(json|lock)$/.test(f)).sort();

describe('mergeShards', () => {
  it('replaces exactly its inputs; the output stands for the RRsets they stood for', async () => {
    const dir = await threeShards(500);
    const [a, b, c] = readManifest(dir).shards;
    const s = await mergeShards(dir, [a!, c!]);
    const m = readManifest(dir);
    expect(m.shards.map((e) => e.file)).toEqual([b!.file, ...s.outputs]);
    expect(s).toMatchObject({ inputShards: 2, outputShards: 1, rrsetsIn: 1_000, rrsetsOut: 500, inputs: [a!.file, c!.file] });
    expect(m.shards[1]).toMatchObject({ rrsets: 500, rrsetsIngested: 1_000 });
    expect(files(dir)).toEqual([b!.file, ...s.outputs].sort());
  });

  it('refuses a swap whose inputs another compaction merged first, deleting its own output', async () => {
    const dir = await threeShards(500);
    const [a, b, c] = readManifest(dir).shards;
    // The merge maps its inputs before its first await; the swap below then
    // drops one of them, as another compaction's swap would.
    const merge = mergeShards(dir, [a!, c!]);
    await updateManifest(dir, (m) => m.shards.filter((e) => e.file !== a!.file));
    const after = readManifest(dir);
    await expect(merge).rejects.toMatchObject({ code: 'COMPACTION_CONFLICT' });
    expect(readManifest(dir)).toEqual(after);
    expect(files(dir)).toEqual([b!.file, c!.file].sort());
  });

  it('aborted on its worker thread: rejects, publishes nothing, leaves no file', async () => {
    const dir = await threeShards(20_000);
    const before = readManifest(dir);
    const abort = new AbortController();
    const merge = mergeShards(dir, before.shards, { offThread: true, signal: abort.signal });
    setTimeout(() => abort.abort(new Error('stop')), 150);
    await expect(merge).rejects.toThrow();
    expect(readManifest(dir)).toEqual(before);
    expect(files(dir)).toEqual(before.shards.map((e) => e.file).sort());
  });
});
