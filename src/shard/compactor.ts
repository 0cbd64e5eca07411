// Compaction: merge the live shards into fewer, aggregating RRsets that
// several shards hold, and swap the result in atomically.
//
// Every shard is sorted by the same key, so this is a streaming k-way merge:
// memory holds one RRset per input shard plus the output shard being built,
// never the whole data set. The key space is cut into one range of owner
// names per thread (workers/compact.ts): each thread merges its range of
// every input and writes its own output shards, which are disjoint by owner.
// The run publishes them all in one manifest swap or deletes them all.
// Shards that an ingest publishes while compaction runs are not touched: the
// swap removes exactly the shards that were merged.

import path from 'node:path';
import { rm } from 'node:fs/promises';
import { LIMITS } from '../config/limits.js';
import { addSighting } from '../model/sighting.js';
import { RrsetTable } from './rrset-table.js';
import { runOnThreads, threadsFor } from '../lib/threads.js';
import type { Observation } from '../model/observation.js';
import { readManifest, removeLeftovers, updateManifest, type ShardEntry } from './manifest.js';
import { WriterLock } from './file-lock.js';
import { ShardReader, type ShardHandle } from './shard-reader.js';
import { blobRecord } from './blob.js';
import { shardRrsets } from './shard-rrsets.js';
import { mergeSorted } from '../lib/merge.js';
import { blobLowerBound } from './blob.js';
import { buildShardBody, writeShardFile } from './shard-writer.js';
import { SHARD_HEADER_BYTES } from './format.js';

export interface CompactSummary {
  inputShards: number;
  outputShards: number;
  rrsetsIn: number;
  rrsetsOut: number;
  seconds: number;
}

export interface CompactOptions {
  /** RRsets per output shard at most (LIMITS.shardRrsetsMax); threads share it, see compact(). */
  shardRrsetsMax?: number;
  now?: number;
  /** Threads (default one per core); fewer when the data is small. */
  threads?: number;
  /** Inputs with fewer RRsets than this are merged on the calling thread (LIMITS; tests lower it). */
  parallelRrsetsMin?: number;
}

/** One thread's part of a compaction: owners in [from, to) of every input, by reversed name. */
export interface CompactRange {
  dataDir: string;
  /** The inputs, mapped and verified once by the caller and shared (ShardReader.attach). */
  shards: ShardHandle[];
  /** Reversed owner names; undefined = the start or the end of the key space. */
  from: string | undefined;
  to: string | undefined;
  shardRrsetsMax: number;
  now: number;
  label: string;
  /** The run's WriterLock id (file-lock.ts). */
  writer: string;
}

export interface CompactRangeResult {
  written: ShardEntry[];
  rrsetsIn: number;
}

export async function compact(dataDir: string, opts: CompactOptions = {}): Promise<CompactSummary> {
  const started = performance.now();
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const perShard = opts.shardRrsetsMax ?? LIMITS.shardRrsetsMax;
  const inputs = readManifest(dataDir).shards;
  if (inputs.length <= 1) {
    // No swap to clean up after a dead writer, so clean up here: this is the
    // run that follows a compaction killed after its swap (removeLeftovers).
    await removeLeftovers(dataDir);
    return { inputShards: inputs.length, outputShards: inputs.length, rrsetsIn: inputs[0]?.rrsets ?? 0,
      rrsetsOut: inputs[0]?.rrsets ?? 0, seconds: 0 };
  }
  const total = inputs.reduce((n, e) => n + e.rrsets, 0);
  const threads = total < (opts.parallelRrsetsMin ?? LIMITS.compactParallelRrsetsMin) ? 1
    : threadsFor(opts.threads);
  const files = inputs.map((e) => e.file);
  const readers = files.map((f) => ShardReader.open(path.join(dataDir, f)));
  const shards = readers.map((r) => ({ name: r.name, buffer: r.buffer }));
  const bounds = splitOwners(readers, threads);
  const writer = WriterLock.acquire(dataDir);
  let results: CompactRangeResult[];
  try {
    // Threads share the output budget, so peak memory is that of one thread.
    const tasks = bounds.slice(1).map((to, i): CompactRange => ({
      dataDir, shards, from: bounds[i], to, shardRrsetsMax: Math.max(1, Math.ceil(perShard / threads)), now,
      label: `compact ${inputs.length} shards`, writer: writer.id,
    }));
    const settled = tasks.length === 1 ? await Promise.allSettled([compactRange(tasks[0]!)])
      : await runOnThreads<CompactRange, CompactRangeResult>('compact', tasks);
    results = settled.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    const written = results.flatMap((r) => r.written);
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    try {
      if (failed) throw failed.reason;
      const merged = new Set(files);
      await updateManifest(dataDir, (m) => [...m.shards.filter((s) => !merged.has(s.file)), ...written]);
    } catch (err) {
      for (const w of written) await rm(path.join(dataDir, w.file), { force: true });
      throw err;
    }
  } finally {
    writer.release();
  }
  const written = results.flatMap((r) => r.written);
  return {
    inputShards: inputs.length, outputShards: written.length,
    rrsetsIn: results.reduce((n, r) => n + r.rrsetsIn, 0), rrsetsOut: written.reduce((n, w) => n + w.rrsets, 0),
    seconds: (performance.now() - started) / 1000,
  };
}

/**
 * Cut points of the owner key space for `parts` ranges: the owners at even
 * quantiles of the input with the most owners (shards of one data set hold
 * names in much the same spread). Returns parts + 1 bounds, open at both ends;
 * fewer when owners are too few to cut.
 */
function splitOwners(readers: readonly ShardReader[], parts: number): (string | undefined)[] {
  if (parts <= 1) return [undefined, undefined];
  const biggest = readers.reduce((a, b) => (b.owners.offsets.length > a.owners.offsets.length ? b : a));
  const owners = biggest.owners.offsets.length - 1;
  const cuts: (string | undefined)[] = [undefined];
  let last: string | undefined;
  for (let k = 1; k < parts; k++) {
    const key = blobRecord(biggest.owners, Math.floor((owners * k) / parts));
    if (last === undefined || key > last) cuts.push((last = key));
  }
  cuts.push(undefined);
  return cuts;
}

/** Merges one range of owners of every input into new shard files; deletes what it wrote if it fails. */
export async function compactRange(t: CompactRange): Promise<CompactRangeResult> {
  const readers = t.shards.map((h) => ShardReader.attach(h.name, h.buffer));
  const written: ShardEntry[] = [];
  let batch = new RrsetTable();
  let rrsetsIn = 0;
  const flush = async () => {
    if (batch.size === 0) return;
    const { body, stats } = buildShardBody(batch, t.label, t.now);
    batch = new RrsetTable();
    const file = await writeShardFile(t.dataDir, body, t.now, t.writer);
    written.push({ file, rrsets: stats.rrsets, bytes: body.byteLength + SHARD_HEADER_BYTES, createdAt: t.now, source: t.label });
  };
  try {
    const inputs = readers.map((r) => {
      const end = r.owners.offsets.length - 1;
      const from = t.from === undefined ? 0 : blobLowerBound(r.owners, t.from);
      const to = t.to === undefined ? end : blobLowerBound(r.owners, t.to);
      return shardRrsets(r, from, to);
    });
    for (const group of mergeSorted(inputs)) {
      const merged: Observation = { ...group[0]!.rrset };
      for (let i = 1; i < group.length; i++) addSighting(merged, group[i]!.rrset);
      rrsetsIn += group.length;
      batch.add(merged);
      if (batch.size >= t.shardRrsetsMax) await flush();
    }
    await flush();
  } catch (err) {
    for (const w of written) await rm(path.join(t.dataDir, w.file), { force: true });
    throw err;
  }
  return { written, rrsetsIn };
}
