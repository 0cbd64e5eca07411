// Compaction: merge the live shards into fewer, aggregating RRsets that
// several shards hold, and swap the result in atomically.
//
// Every shard is sorted by the same key, so this is a streaming k-way merge:
// memory holds one RRset per input shard plus the output shard being built
// (at most LIMITS.shardRrsetsMax RRsets), never the whole data set. Shards
// that an ingest publishes while compaction runs are not touched: the
// manifest swap removes exactly the shards that were merged.

import path from 'node:path';
import { LIMITS } from '../config/limits.js';
import { mergeInto, RrsetTable } from '../ingest/aggregate.js';
import type { Observation } from '../ingest/observation.js';
import { readManifest, updateManifest, type ShardEntry } from './manifest.js';
import { ShardReader } from './shard-reader.js';
import { shardRrsets } from './shard-rrsets.js';
import { mergeSorted } from '../search/merge.js';
import { buildShardBody, writeShardFile } from './shard-writer.js';
import { SHARD_HEADER_BYTES } from './format.js';
import { rm } from 'node:fs/promises';

export interface CompactSummary {
  inputShards: number;
  outputShards: number;
  rrsetsIn: number;
  rrsetsOut: number;
  seconds: number;
}

export async function compact(dataDir: string, opts: { shardRrsetsMax?: number; now?: number } = {}): Promise<CompactSummary> {
  const started = performance.now();
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const perShard = opts.shardRrsetsMax ?? LIMITS.shardRrsetsMax;
  const inputs = readManifest(dataDir).shards;
  if (inputs.length <= 1) {
    return { inputShards: inputs.length, outputShards: inputs.length, rrsetsIn: inputs[0]?.rrsets ?? 0,
      rrsetsOut: inputs[0]?.rrsets ?? 0, seconds: 0 };
  }
  const readers = inputs.map((e) => ShardReader.open(path.join(dataDir, e.file)));
  const written: ShardEntry[] = [];
  let batch = new RrsetTable();
  let rrsetsIn = 0;
  let rrsetsOut = 0;
  const label = `compact ${inputs.length} shards`;
  const flush = async () => {
    if (batch.size === 0) return;
    const { body, stats } = buildShardBody(batch, label, now);
    batch = new RrsetTable();
    const file = await writeShardFile(dataDir, body, now);
    written.push({ file, rrsets: stats.rrsets, bytes: body.byteLength + SHARD_HEADER_BYTES, createdAt: now, source: label });
    rrsetsOut += stats.rrsets;
  };
  try {
    for (const group of mergeSorted(readers.map((r) => shardRrsets(r)))) {
      const merged: Observation = { ...group[0]!.rrset };
      for (let i = 1; i < group.length; i++) mergeInto(merged, group[i]!.rrset);
      rrsetsIn += group.length;
      batch.add(merged);
      if (batch.size >= perShard) await flush();
    }
    await flush();
    const merged = new Set(inputs.map((e) => e.file));
    await updateManifest(dataDir, (m) => [...m.shards.filter((s) => !merged.has(s.file)), ...written]);
  } catch (err) {
    for (const w of written) await rm(path.join(dataDir, w.file), { force: true });
    throw err;
  }
  return { inputShards: inputs.length, outputShards: written.length, rrsetsIn, rrsetsOut,
    seconds: (performance.now() - started) / 1000 };
}
