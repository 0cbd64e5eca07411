// Fuzz target: the background compaction policy (src/shard/compaction-policy.ts)
// over random sequences of published shards (bench/compaction-sim.ts plays
// them, merging as AutoCompactor would).
//
// Properties, for any fan-in, tier minimum, merge budget, flush sizes and
// duplicate rate:
// - every merge takes k unsealed shards of one tier whose RRsets and bytes
//   stay under the merge budget (so it writes one shard, in bounded memory);
// - once no merge is due, the unsealed shards number at most
//   unsealedShardsMax(published), and every sealed one is at least a k-th of
//   the merge budget;
// - no record is rewritten more than rewritesMax(published, smallest) times,
//   and merges write at most that many times the RRsets published;
// - weights add up: the shards' weights sum to the RRsets published.

import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import {
  isSealed, nextMerge, rewritesMax, tierOf, unsealedShardsMax, weightOf, type TieredPolicy,
} from '../../src/shard/compaction-policy.js';
import { PolicySim, withDuplicates, type Aggregate } from '../../bench/compaction-sim.js';
import { checkProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';

const RUNS = runsFor(200);

const policy = fc.record({
  fanIn: fc.integer({ min: 2, max: 8 }),
  tierMinRrsets: fc.integer({ min: 1, max: 2_000 }),
  mergeRrsetsMax: fc.integer({ min: 1_000, max: 2_000_000 }),
  mergeBytesMax: fc.integer({ min: 10_000, max: 200_000_000 }),
});

/** A flush: its RRsets (1 to 50,000, mostly small), bytes per RRset. */
const flush = fc.record({
  rrsets: fc.oneof(fc.integer({ min: 1, max: 100 }), fc.integer({ min: 1, max: 50_000 })),
  bytesPerRrset: fc.integer({ min: 40, max: 400 }),
});

describe('compaction policy bounds', () => {
  test('shard count, write amplification and merge budget hold over random publish sequences', () => {
    checkProperty('compaction-policy', RUNS, fc.property(policy, fc.array(flush, { minLength: 1, maxLength: 400, size: 'max' }),
      fc.double({ min: 0, max: 1, noNaN: true }), (p: TieredPolicy, flushes, dup) => {
        const aggregate = withDuplicates(dup);
        const checked: Aggregate = (inputs) => {
          // Every merge: k unsealed shards of one tier, under the budget.
          expect(inputs).toHaveLength(p.fanIn);
          expect(inputs.every((s) => !isSealed(s, p))).toBe(true);
          expect(new Set(inputs.map((s) => tierOf(weightOf(s), p))).size).toBe(1);
          expect(inputs.reduce((n, s) => n + s.rrsets, 0)).toBeLessThan(p.mergeRrsetsMax);
          expect(inputs.reduce((n, s) => n + s.bytes, 0)).toBeLessThan(p.mergeBytesMax);
          return aggregate(inputs);
        };
        const sim = new PolicySim(p, checked);
        flushes.forEach((f, i) => {
          sim.publish(f.rrsets, f.rrsets * f.bytesPerRrset, i * 10);
          const unsealed = sim.shards.filter((s) => !isSealed(s, p));
          expect(unsealed.length).toBeLessThanOrEqual(unsealedShardsMax(sim.published, p));
          expect(nextMerge(sim.shards, p)).toBeUndefined();
        });
        const bound = rewritesMax(sim.published, sim.smallest, p);
        expect(sim.worstRewrites).toBeLessThanOrEqual(bound);
        expect(sim.written).toBeLessThanOrEqual(bound * sim.published);
        expect(sim.shards.reduce((n, s) => n + weightOf(s), 0)).toBe(sim.published);
        for (const s of sim.shards.filter((x) => isSealed(x, p))) {
          expect(s.rrsets * p.fanIn >= p.mergeRrsetsMax || s.bytes * p.fanIn >= p.mergeBytesMax).toBe(true);
        }
      }));
  }, FUZZ_TIMEOUT_MS);

  test('with merges that take time, flushes wait and are merged once the merge in flight is done', () => {
    checkProperty('compaction-policy-timed', RUNS, fc.property(policy, fc.array(flush, { minLength: 1, maxLength: 300, size: 'max' }),
      fc.integer({ min: 100, max: 1_000_000 }), (p: TieredPolicy, flushes, rate) => {
        const sim = new PolicySim(p, withDuplicates(0), rate);
        flushes.forEach((f, i) => sim.publish(f.rrsets, f.rrsets * f.bytesPerRrset, i * 10));
        sim.settle();
        expect(nextMerge(sim.shards, p)).toBeUndefined();
        expect(sim.shards.filter((s) => !isSealed(s, p)).length).toBeLessThanOrEqual(unsealedShardsMax(sim.published, p));
        expect(sim.worstRewrites).toBeLessThanOrEqual(rewritesMax(sim.published, sim.smallest, p));
        expect(sim.shards.reduce((n, s) => n + weightOf(s), 0)).toBe(sim.published);
      }));
  }, FUZZ_TIMEOUT_MS);
});
