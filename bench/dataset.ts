// The flexible-search benchmark dataset: N names from names.ts, one A RRset
// each, ingested and compacted into `dataDir`, plus `names.txt` (the same
// names, one per line) for the ripgrep baseline. Built once and reused by
// flex.ts, flex-load.ts, lookup.ts, shard-load.ts and soak-serve.ts; the last
// two serve it from a copy of their own (servingCopy), with their own keys.

import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, linkSync, mkdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { LIMITS } from '../src/config/limits.js';
import { ingestObservations } from '../src/ingest/run.js';
import { compact } from '../src/shard/compactor.js';
import { MANIFEST_FILE, readManifest } from '../src/shard/manifest.js';
import { benchNames, benchObservations } from './names.js';
import { BIN, fmt, writeFileFrom } from './common.js';

export const NAMES_FILE = 'names.txt';

/** Builds the dataset unless `dataDir` already holds it. */
export async function ensureFlexDataset(dataDir: string, names: number, say: (line: string) => void = console.log): Promise<void> {
  if (existsSync(path.join(dataDir, NAMES_FILE)) && existsSync(path.join(dataDir, MANIFEST_FILE)) &&
      readManifest(dataDir).shards.length > 0) return;
  mkdirSync(dataDir, { recursive: true });
  say(`building ${names} names in ${dataDir} ...`);
  const t0 = performance.now();
  await writeFileFrom(path.join(dataDir, NAMES_FILE), (function* () {
    for (const n of benchNames(names)) yield `${n}\n`;
  })());
  const t1 = performance.now();
  const s = await ingestObservations(benchObservations(names), dataDir, `bench ${names}`);
  const t2 = performance.now();
  const c = await compact(dataDir);
  const t3 = performance.now();
  say(`  ${s.rrsets} RRsets in ${s.shards.length} shards (ingest ${fmt((t2 - t1) / 1000)} s) -> compacted to ` +
    `${c.outputShards} (compact ${fmt((t3 - t2) / 1000)} s); total ${fmt((t3 - t0) / 1000)} s`);
}

/**
 * A data directory a server can own, `scratch`/data (`scratch` is emptied
 * first): hard links to the dataset's (immutable) shards, a copy of its
 * manifest, no keys, so keys added there never touch the dataset's store.
 */
export function servingCopy(dataDir: string, scratch: string): string {
  const dir = path.join(scratch, 'data');
  rmSync(scratch, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const s of readManifest(dataDir).shards) {
    try {
      linkSync(path.join(dataDir, s.file), path.join(dir, s.file));
    } catch {
      copyFileSync(path.join(dataDir, s.file), path.join(dir, s.file));
    }
  }
  copyFileSync(path.join(dataDir, MANIFEST_FILE), path.join(dir, MANIFEST_FILE));
  return dir;
}

/** An unlimited key with the largest results_max, by `rrscan keys add` through the CLI as an operator would. */
export function cliAddKey(dir: string): string {
  const r = spawnSync(process.execPath,
    [BIN, 'keys', 'add', '--data', dir, '--unlimited', '--results-max', String(LIMITS.resultsMaxCeiling)], { encoding: 'utf8' });
  const key = r.stdout.trim().split('\n').pop()?.trim() ?? '';
  if (r.status !== 0 || !/^[0-9a-f-]{16,}$/.test(key)) throw new Error(`rrscan keys add failed (${r.status}): ${r.stdout}${r.stderr}`);
  return key;
}
