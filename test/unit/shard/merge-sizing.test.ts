// mergeSizing: a compaction's threads and output shard size under its
// memory bound (compact --memory-mb) and the file size cap.

import { availableParallelism } from 'node:os';
import { describe, expect, it } from 'vitest';
import { LIMITS } from '../../../src/config/limits.js';
import { mergeSizing } from '../../../src/shard/compactor.js';

const MiB = 1_048_576;
/** Inputs of `rrsets` RRsets in all at `bytesPerRrset` on disk. */
const inputs = (rrsets: number, bytesPerRrset = 100) =>
  [{ file: 'a.rrs', rrsets, bytes: rrsets * bytesPerRrset, createdAt: 1, source: 't' }];
const heldBy = (mb: number) => Math.floor((mb * MiB - LIMITS.compactBaseBytes) / LIMITS.mergeBytesPerRrsetHeld);

describe('mergeSizing', () => {
  it('at the default 4 GiB: one thread, shards as large as the budget holds', () => {
    expect(mergeSizing(inputs(100_000_000), {})).toEqual({ threads: 1, shardRrsetsMax: heldBy(4096) });
  });

  it('more memory buys threads at the target size each, up to the cores', () => {
    const r = mergeSizing(inputs(100_000_000), { memoryBytes: 16_384 * MiB });
    expect(r.threads).toBe(Math.min(availableParallelism(), 5));
    const byFile = Math.floor((LIMITS.shardBytesMax * 0.9) / 100);
    expect(r.shardRrsetsMax).toBe(Math.min(LIMITS.shardRrsetsMax, byFile, Math.floor(heldBy(16_384) / r.threads)));
  });

  it('asked threads share the budget', () => {
    expect(mergeSizing(inputs(100_000_000), { threads: 2 })).toEqual({ threads: 2, shardRrsetsMax: Math.floor(heldBy(4096) / 2) });
  });

  it('a shard file stays under shardBytesMax at the inputs\' bytes per RRset', () => {
    const r = mergeSizing(inputs(100_000_000, 1_000), { memoryBytes: 16_384 * MiB, threads: 1 });
    expect(r.shardRrsetsMax).toBe(Math.floor((LIMITS.shardBytesMax * 0.9) / 1_000));
  });

  it('a small merge runs on one thread, and an explicit shard size is shared by the threads', () => {
    expect(mergeSizing(inputs(1_000), { threads: 2 }).threads).toBe(1);
    expect(mergeSizing(inputs(100_000_000), { threads: 2, shardRrsetsMax: 1_000_000 })).toEqual({ threads: 2, shardRrsetsMax: 500_000 });
  });
});
