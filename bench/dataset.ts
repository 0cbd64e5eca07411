// The flexible-search benchmark dataset: N names from names.ts, one A RRset
// each, ingested and compacted into `dataDir`, plus `names.txt` (the same
// names, one per line) for the ripgrep baseline. Built once and reused by
// flex.ts, flex-load.ts, lookup.ts and shard-load.ts.

import { createWriteStream, existsSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { ingestObservations } from '../src/ingest/run.js';
import { compact } from '../src/shard/compactor.js';
import { MANIFEST_FILE, readManifest } from '../src/shard/manifest.js';
import { benchNames, benchObservations } from './names.js';
import { fmt } from './common.js';

export const NAMES_FILE = 'names.txt';

/** Builds the dataset unless `dataDir` already holds it. */
export async function ensureFlexDataset(dataDir: string, names: number, say: (line: string) => void = console.log): Promise<void> {
  if (existsSync(path.join(dataDir, NAMES_FILE)) && existsSync(path.join(dataDir, MANIFEST_FILE)) &&
      readManifest(dataDir).shards.length > 0) return;
  mkdirSync(dataDir, { recursive: true });
  say(`building ${names} names in ${dataDir} ...`);
  const t0 = performance.now();
  const out = createWriteStream(path.join(dataDir, NAMES_FILE));
  for (const n of benchNames(names)) if (!out.write(n + '\n')) await new Promise<void>((r) => out.once('drain', () => r()));
  await new Promise<void>((r) => out.end(() => r()));
  const t1 = performance.now();
  const s = await ingestObservations(benchObservations(names), dataDir, `bench ${names}`);
  const t2 = performance.now();
  const c = await compact(dataDir);
  const t3 = performance.now();
  say(`  ${s.rrsets} RRsets in ${s.shards.length} shards (ingest ${fmt((t2 - t1) / 1000)} s) -> compacted to ` +
    `${c.outputShards} (compact ${fmt((t3 - t2) / 1000)} s); total ${fmt((t3 - t0) / 1000)} s`);
}
