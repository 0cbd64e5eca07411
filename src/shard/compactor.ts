// Compaction: merge the live shards into fewer, aggregating RRsets that
// several shards hold, and swap the result in atomically.
//
// Every shard is sorted by the same key, so this is a streaming k-way merge:
// memory holds one RRset per input shard plus the output shard being built,
// never the whole data set. The key space is cut into one range of owner
// names per thread (compact-range.ts, on workers/compact.ts): each thread
// merges its range of every input and writes its own output shards, which
// are disjoint by owner.
// The run publishes them all in one manifest swap or deletes them all.
// Shards that an ingest publishes while compaction runs are not touched: the
// swap removes exactly the shards that were merged, and refuses to publish
// when one of them is gone (another compaction merged it: publishing would
// count its RRsets twice). One compaction runs at a time in a directory: each
// holds a flock on the directory itself for its run (the compaction lock), so
// `rrscan compact` waits for a background merge (auto-compactor.ts) to end
// instead of racing it.
//
// mergeShards() merges any set of live shards (the background policy picks
// a few); compact() merges them all, unless they are already what it would
// write (alreadyCompact): then it leaves them, rather than rewrite every
// byte of the data set to the same shards (313 s at 100 M RRsets).

import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { rm } from 'node:fs/promises';
import { LIMITS } from '../config/limits.js';
import { CompactionConflictError } from '../errors/catalogue.js';
import { outcomes, runOnThreads, threadsFor } from '../lib/threads.js';
import { readManifest, removeLeftovers, removeUnpublished, updateManifest, waitForLock, type ShardEntry } from './manifest.js';
import { FileLock, WriterLock } from './file-lock.js';
import { weightOf } from './compaction-policy.js';
import { mergedInputs, recordOnLast } from './ledger.js';
import { ShardReader, type ShardHandle } from './shard-reader.js';
import { blobRecord } from './blob.js';
import { compareShardRrsets } from './shard-merge.js';
import { readVerified, writeVerified } from './verified.js';
import { compactRange, type CompactRange, type CompactRangeResult } from './compact-range.js';

export interface CompactSummary {
  inputShards: number;
  outputShards: number;
  rrsetsIn: number;
  rrsetsOut: number;
  bytesIn: number;
  bytesOut: number;
  seconds: number;
  /** File names of the merged shards and of the shards that replaced them. */
  inputs: string[];
  outputs: string[];
  /** compact() left several shards as they were: already what a merge would write (alreadyCompact). */
  alreadyCompact?: true;
}

export interface CompactOptions {
  /** RRsets per output shard at most (LIMITS.shardRrsetsMax); threads share it, see compact(). */
  shardRrsetsMax?: number;
  /**
   * Anonymous memory the merge may hold (compact --memory-mb; default
   * LIMITS.compactMemoryBytesDefault): it sizes the output shards, and the
   * threads when none are asked for (mergeSizing).
   */
  memoryBytes?: number;
  now?: number;
  /** Threads (default: as many as the memory bound allows at compactShardRrsetsTarget a shard, at most one per core). */
  threads?: number;
  /** Inputs with fewer RRsets than this are merged on the calling thread (LIMITS; tests lower it). */
  parallelRrsetsMin?: number;
}

export interface MergeOptions extends CompactOptions {
  /** The output shards' source label. */
  label?: string;
  /**
   * Merge on a worker thread even when one range does: the inputs are then
   * opened and checked there too, and the caller's event loop (a receiver,
   * a server) never waits on the merge.
   */
  offThread?: boolean;
  /**
   * Abandons the merge when aborted before its swap: its threads are
   * stopped, what they wrote is deleted, the manifest is untouched, and
   * mergeShards rejects with an AbortError. Once the swap has begun it ends.
   */
  signal?: AbortSignal;
}

/**
 * Takes the compaction lock of `dataDir` (see the top of this file), or
 * undefined while another compaction holds it; returns its release.
 */
export function tryCompactionLock(dataDir: string): (() => void) | undefined {
  const lock = FileLock.tryAcquireDirectory(dataDir);
  return lock === undefined ? undefined : () => lock.release();
}

/** Merges every live shard into as few as possible, waiting for a compaction already running. */
export async function compact(dataDir: string, opts: CompactOptions = {}): Promise<CompactSummary> {
  if (!existsSync(dataDir)) return unmerged([]);
  const release = await waitForLock(() => tryCompactionLock(dataDir), LIMITS.compactLockWaitMs,
    () => `${dataDir}: another compaction has been running`);
  try {
    const inputs = readManifest(dataDir).shards;
    const compacted = inputs.length > 1 && await alreadyCompact(dataDir, inputs, opts);
    if (inputs.length > 1 && !compacted) return await mergeShards(dataDir, inputs, opts);
    // No swap to clean up after a dead writer, so clean up here: this is the
    // run that follows a compaction killed after its swap (removeLeftovers).
    await removeLeftovers(dataDir);
    return compacted ? { ...unmerged(inputs), alreadyCompact: true } : unmerged(inputs);
  } finally {
    release();
  }
}

/** The summary of a compaction that left the shards as they were (nothing to merge, or nothing to gain). */
function unmerged(inputs: readonly ShardEntry[]): CompactSummary {
  const files = inputs.map((e) => e.file);
  const rrsets = inputs.reduce((n, e) => n + e.rrsets, 0);
  const bytes = inputs.reduce((n, e) => n + e.bytes, 0);
  return { inputShards: inputs.length, outputShards: inputs.length, rrsetsIn: rrsets, rrsetsOut: rrsets, bytesIn: bytes,
    bytesOut: bytes, seconds: 0, inputs: files, outputs: files };
}

/**
 * Whether merging every shard would only write the same RRsets to as many
 * shards again: the shards' RRsets do not interleave (sorted by their first
 * RRset, each shard's last comes before the next one's first, so no RRset
 * is in two of them to aggregate), none holds more than a merge now writes
 * to one shard, and there are no more of them than a merge would write (the
 * minimum, plus one per thread but the first: each thread's last shard may
 * be part-full). What a full compaction writes is exactly such a set, so a
 * second `rrscan compact` finds nothing to do.
 *
 * A shard recorded as verified (verified.json, unchanged since) is read
 * without verifying it again; any other is verified, as a merge would, and
 * recorded, as a server records what it verified. Verifying reads every
 * byte: `rrscan compact` of bench/scale.ts's 100 M RRsets (15 shards,
 * 19 GB) decides in 11-39 s with nothing recorded, 0.25 s with all of it,
 * where rewriting them took 313 s. A shard that fails means a merge, which
 * says what is wrong.
 */
async function alreadyCompact(dataDir: string, inputs: readonly ShardEntry[], opts: CompactOptions): Promise<boolean> {
  const { threads, shardRrsetsMax } = mergeSizing(inputs, opts);
  const total = inputs.reduce((n, e) => n + e.rrsets, 0);
  // An empty shard is merged away.
  if (inputs.some((e) => e.rrsets === 0 || e.rrsets > shardRrsetsMax)) return false;
  if (inputs.length > Math.ceil(total / shardRrsetsMax) + threads - 1) return false;
  const verified = new Map(readVerified(dataDir));
  let shards: ShardReader[];
  let verifiedNow = 0;
  try {
    shards = inputs.map((e) => {
      const file = path.join(dataDir, e.file);
      const h = ShardReader.map(file);
      if (verified.get(e.file) === h.identity) return ShardReader.attach(h);
      const r = ShardReader.open(file);
      verified.set(e.file, r.identity);
      verifiedNow++;
      return r;
    });
  } catch {
    return false;
  }
  // Advice only (verified.ts): a directory that cannot be written costs a verification next time.
  if (verifiedNow > 0) await writeVerified(dataDir, verified).catch(() => undefined);
  if (shards.some((r) => r.rrsetCount === 0 || r.owners.offsets.length < 2)) return false;
  const last = (r: ShardReader) => [r.owners.offsets.length - 2, r.rrsetCount - 1] as const;
  shards.sort((a, b) => compareShardRrsets(a, 0, 0, b, 0, 0));
  for (let k = 1; k < shards.length; k++) {
    const a = shards[k - 1]!, b = shards[k]!;
    if (compareShardRrsets(a, ...last(a), b, 0, 0) >= 0) return false;
  }
  return true;
}

/**
 * Merges `inputs`, live shards of `dataDir`, into new shards and swaps them
 * in for exactly those inputs. The caller holds the compaction lock. Throws, having
 * published nothing and deleted what it wrote, when a merge thread fails, the
 * disk is full, the signal aborts, or another compaction merged an input
 * first (CompactionConflictError).
 */
export async function mergeShards(dataDir: string, inputs: readonly ShardEntry[], opts: MergeOptions = {}): Promise<CompactSummary> {
  const started = performance.now();
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  const { threads, shardRrsetsMax } = mergeSizing(inputs, opts);
  const files = inputs.map((e) => e.file);
  const label = opts.label ?? `compact ${inputs.length} shards`;
  const writer = WriterLock.acquire(dataDir);
  let results: CompactRangeResult[];
  try {
    let shards: (ShardHandle | string)[];
    let bounds: (string | undefined)[];
    if (opts.offThread) {
      shards = files.map((f) => path.join(dataDir, f));
      bounds = [undefined, undefined];
    } else {
      const readers = files.map((f) => ShardReader.open(path.join(dataDir, f)));
      shards = readers.map((r) => r.handle());
      bounds = splitOwners(readers, threads);
    }
    // Threads share the output budget, so peak memory is that of one thread.
    const tasks = bounds.slice(1).map((to, i): CompactRange => ({
      dataDir, shards, from: bounds[i], to, shardRrsetsMax, now,
      label, writer: writer.id,
    }));
    const settled = tasks.length === 1 && !opts.offThread ? await Promise.allSettled([compactRange(tasks[0]!)])
      : await runOnThreads('compact', tasks, opts.signal);
    const { done, failed } = outcomes(settled);
    results = done;
    const written = results.flatMap((r) => r.written);
    try {
      if (failed) throw failed.reason;
      opts.signal?.throwIfAborted();
      const outputs = spreadWeight(written, inputs.reduce((n, e) => n + weightOf(e), 0));
      await updateManifest(dataDir, (m) => {
        const live = new Set(m.shards.map((s) => s.file));
        const gone = files.find((f) => !live.has(f));
        if (gone !== undefined) throw new CompactionConflictError(dataDir, gone);
        const merged = new Set(files);
        // The ledger from the live entries, not `inputs`: an ingest's swap may have trimmed them since (ledger.ts).
        const ledger = mergedInputs(m.shards.filter((s) => merged.has(s.file)));
        return [...m.shards.filter((s) => !merged.has(s.file)), ...recordOnLast(outputs, ledger)];
      });
      results = [{ written: outputs, rrsetsIn: results.reduce((n, r) => n + r.rrsetsIn, 0) }];
    } catch (err) {
      for (const w of written) await rm(path.join(dataDir, w.file), { force: true });
      // A thread that was stopped did not say what it had written.
      await removeUnpublished(dataDir, writer.id);
      throw err;
    }
  } finally {
    writer.release();
  }
  const written = results.flatMap((r) => r.written);
  return {
    inputShards: inputs.length, outputShards: written.length,
    rrsetsIn: results.reduce((n, r) => n + r.rrsetsIn, 0), rrsetsOut: written.reduce((n, w) => n + w.rrsets, 0),
    bytesIn: inputs.reduce((n, e) => n + e.bytes, 0), bytesOut: written.reduce((n, w) => n + w.bytes, 0),
    seconds: (performance.now() - started) / 1000, inputs: files, outputs: written.map((w) => w.file),
  };
}

/**
 * Threads and output shard size of a merge. Memory: each thread holds one
 * output shard's table and arrays at a time, mergeBytesPerRrsetHeld an
 * RRset, so a thread's shard holds at most (budget - base) / threads /
 * mergeBytesPerRrsetHeld RRsets. Files: at most shardBytesMax (with a tenth
 * to spare), at the inputs' bytes per RRset. Without --workers, threads are
 * as many as the budget holds at compactShardRrsetsTarget RRsets a shard
 * (one at 4 GiB), at most one per core: few, large shards make searches
 * cheaper than a faster merge would. An explicit shardRrsetsMax is shared
 * by the threads, as before.
 */
export function mergeSizing(inputs: readonly ShardEntry[], opts: MergeOptions): { threads: number; shardRrsetsMax: number } {
  const total = inputs.reduce((n, e) => n + e.rrsets, 0);
  const bytes = inputs.reduce((n, e) => n + e.bytes, 0);
  const budget = Math.max(0, (opts.memoryBytes ?? LIMITS.compactMemoryBytesDefault) - LIMITS.compactBaseBytes);
  const fitting = Math.floor(budget / (LIMITS.compactShardRrsetsTarget * LIMITS.mergeBytesPerRrsetHeld));
  const threads = opts.offThread || total < (opts.parallelRrsetsMin ?? LIMITS.compactParallelRrsetsMin) ? 1
    : threadsFor(opts.threads ?? Math.max(1, Math.min(fitting, availableParallelism())));
  const byMemory = Math.floor(budget / threads / LIMITS.mergeBytesPerRrsetHeld);
  const byFile = Math.floor((LIMITS.shardBytesMax * 0.9) / Math.max(1, bytes / Math.max(1, total)));
  const asked = opts.shardRrsetsMax === undefined ? LIMITS.shardRrsetsMax : Math.ceil(opts.shardRrsetsMax / threads);
  return { threads, shardRrsetsMax: Math.max(1, Math.min(asked, byMemory, byFile, LIMITS.shardRrsetsMax)) };
}

/** The outputs with the inputs' weight shared by their RRsets (the last takes the rounding), so weights still add up. */
function spreadWeight(written: readonly ShardEntry[], weight: number): ShardEntry[] {
  const rrsets = written.reduce((n, w) => n + w.rrsets, 0);
  let left = weight;
  return written.map((w, i) => {
    const share = i === written.length - 1 ? left : Math.floor((weight * w.rrsets) / Math.max(1, rrsets));
    left -= share;
    return { ...w, rrsetsIngested: share };
  });
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
