// The tiered compaction policy's choices on hand-made manifests
// (src/shard/compaction-policy.ts); test/fuzz/compaction-policy.fuzz.ts
// checks its bounds on random sequences.
import { describe, expect, it } from 'vitest';
import {
  DEFAULT_POLICY, nextMerge, policyProblem, rewritesMax, tierOf, unsealedShardsMax, type PolicyShard, type TieredPolicy,
} from '../../../src/shard/compaction-policy.js';
import { PolicySim } from '../../../bench/compaction-sim.js';

const P: TieredPolicy = { fanIn: 4, tierMinRrsets: 100, mergeRrsetsMax: 1_000_000, mergeBytesMax: 1_000_000_000 };

let seq = 0;
const shard = (rrsets: number, extra: Partial<PolicyShard> = {}): PolicyShard => ({
  file: `s${String(seq++).padStart(4, '0')}`, rrsets, bytes: rrsets * 100, createdAt: 1_000 + seq, ...extra,
});
const files = (shards: readonly PolicyShard[] | undefined) => shards?.map((s) => s.file);

describe('tierOf', () => {
  it('puts everything below k*m in tier 0 and steps by k above, exactly at the powers', () => {
    expect([0, 1, 399, 400, 1_599, 1_600, 6_399, 6_400].map((w) => tierOf(w, P))).toEqual([0, 0, 0, 1, 1, 2, 2, 3]);
  });
});

describe('nextMerge', () => {
  it('waits until a tier holds k shards, then takes the k oldest of it', () => {
    const three = [shard(10), shard(20), shard(30)];
    expect(nextMerge(three, P)).toBeUndefined();
    const late = shard(5, { createdAt: 9_999 });
    const early = shard(5, { createdAt: 1 });
    const m = nextMerge([...three, late, early], P);
    expect(m?.tier).toBe(0);
    expect(files(m?.inputs)).toEqual([early.file, three[0]!.file, three[1]!.file, three[2]!.file]);
  });

  it('merges the lowest tier first', () => {
    const tier1 = [shard(500), shard(600), shard(700), shard(800)];
    const tier0 = [shard(1), shard(2), shard(3), shard(4)];
    expect(nextMerge([...tier1, ...tier0], P)?.tier).toBe(0);
    expect(files(nextMerge([...tier1, ...tier0.slice(1)], P)?.inputs)).toEqual(files(tier1));
  });

  it('places a merged shard by the RRsets it stands for, not by what aggregation left', () => {
    // Four merged shards of 150 RRsets that stand for 400 published each are tier 1, not tier 0.
    const merged = [0, 1, 2, 3].map(() => shard(150, { rrsetsIngested: 400 }));
    const fresh = [shard(150), shard(150), shard(150)];
    expect(nextMerge([...merged.slice(0, 3), ...fresh], P)).toBeUndefined();
    expect(nextMerge([...merged, ...fresh], P)?.tier).toBe(1);
  });

  it('never takes a sealed shard (a k-th of the merge budget in RRsets or in bytes)', () => {
    const sealedByRrsets = shard(250_000);
    const sealedByBytes = shard(1_000, { bytes: 250_000_000 });
    const small = [shard(1), shard(2), shard(3)];
    expect(nextMerge([sealedByRrsets, sealedByBytes, ...small], P)).toBeUndefined();
    expect(nextMerge([shard(249_999, { rrsetsIngested: 1 }), ...small], P)?.inputs).toHaveLength(4);
  });
});

describe('bounds', () => {
  it('unsealed shards: k-1 per tier up to the tier of everything published', () => {
    expect(unsealedShardsMax(399, P)).toBe(3);
    expect(unsealedShardsMax(400, P)).toBe(6);
    expect(unsealedShardsMax(100 * 4 ** 9, P)).toBe(30);
  });

  it('rewrites: one per tier once flushes reach the tier minimum; more, of small merges, below it', () => {
    expect(rewritesMax(100 * 4 ** 9, 100, P)).toBe(9);
    expect(rewritesMax(100 * 4 ** 9, 400, P)).toBe(8);
    // Flushes of one RRset: tier 0 rewrites a record up to ceil(399 / 3) times, merges of < 400 RRsets.
    expect(rewritesMax(100 * 4 ** 9, 1, P)).toBe(133 + 8);
  });
});

describe('bounds are reached', () => {
  it('k^n equal flushes of m RRsets end as one shard whose records were rewritten exactly rewritesMax times', () => {
    for (const fanIn of [2, 3, 4]) {
      const p = { ...P, fanIn, tierMinRrsets: 10 };
      const sim = new PolicySim(p);
      for (let i = 0; i < fanIn ** 5; i++) sim.publish(10, 1_000, i);
      expect(sim.shards).toHaveLength(1);
      expect(sim.worstRewrites).toBe(5);
      expect(rewritesMax(sim.published, 10, p)).toBe(5);
    }
  });

  it('one flush short of the next merge at every tier leaves exactly unsealedShardsMax shards', () => {
    const p = { ...P, tierMinRrsets: 10 };
    const sim = new PolicySim(p);
    for (let i = 0; i < 4 ** 5 - 1; i++) sim.publish(10, 1_000, i);
    expect(sim.shards).toHaveLength(unsealedShardsMax(sim.published, p));
  });
});

describe('policyProblem', () => {
  it('accepts the defaults and refuses what would break a bound', () => {
    expect(policyProblem(DEFAULT_POLICY)).toBeUndefined();
    expect(policyProblem({ ...P, fanIn: 1 })).toMatch(/fan-in/);
    expect(policyProblem({ ...P, tierMinRrsets: 0 })).toMatch(/tier minimum/);
    expect(policyProblem({ ...P, mergeRrsetsMax: 20_000_000 })).toMatch(/one shard/);
    expect(policyProblem({ ...P, topShardRrsets: 100_000 })).toMatch(/give more memory/);
  });
});

describe('the top tier', () => {
  const T: TieredPolicy = { ...P, topShardRrsets: 2_000_000 };
  const sealed = (file: string, rrsets: number): PolicyShard => ({ file, rrsets, bytes: rrsets * 200, createdAt: 1 });

  it('merges the k smallest sealed shards under half the top size, and nothing while fewer than k are', () => {
    const shards = [sealed('a', 900_000), sealed('b', 300_000), sealed('c', 250_000), sealed('d', 999_999), sealed('e', 1_500_000)];
    expect(nextMerge(shards, P)).toBeUndefined(); // no top tier without a top shard size
    expect(nextMerge(shards, T)).toEqual({ tier: 'top', inputs: [shards[2], shards[1], shards[0], shards[3]] });
    expect(nextMerge(shards.slice(1), T)).toBeUndefined(); // three under 1 M: fewer than k
  });

  it('comes after every size tier: unsealed shards merge first', () => {
    const small = Array.from({ length: 4 }, (_, i): PolicyShard => ({ file: `s${i}`, rrsets: 10, bytes: 100, createdAt: i }));
    const shards = [...small, sealed('a', 300_000), sealed('b', 300_000), sealed('c', 300_000), sealed('d', 300_000)];
    expect(nextMerge(shards, T)?.tier).toBe(0);
    expect(nextMerge(shards.slice(4), T)?.tier).toBe('top');
  });
});
