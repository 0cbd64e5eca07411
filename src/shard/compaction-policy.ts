// The background compaction policy: which shards to merge next, decided
// from the manifest alone (no I/O here), so that it can be tested and
// simulated over months of flushes in milliseconds.
//
// Size tiers with fan-in k, as in Cassandra's size-tiered and RocksDB's
// universal compaction. A shard's tier is set by its weight: the RRsets that
// ingest runs published and that the shard now stands for (rrsetsIngested in
// the manifest; a shard ingest wrote weighs its own RRsets). Weight, not the
// RRsets left after aggregation, because passive DNS repeats itself: a merge
// of k shards that mostly hold the same RRsets is hardly bigger than one of
// them and would stay in its tier, rewriting the same records at every merge.
// Weights add up exactly, so a merge always lifts its records a tier.
//
//   tier(s) = 0 when weight(s) < k*m, else floor(log_k(weight(s) / m))
//   (m = tierMinRrsets; shards below k*m share tier 0)
//
// The next merge is the k oldest shards of the lowest tier that holds k.
// A shard with at least mergeRrsetsMax / k RRsets (or shardBytesMax / k
// bytes) is sealed and never merged again, so a merge reads fewer than
// mergeRrsetsMax RRsets and writes one shard: that bounds its memory.
//
// What that guarantees, with W the RRsets ever published (the sum of every
// shard's weight) and w the smallest published shard:
// - Shard count. Once no tier holds k shards, each of the tiers
//   0..floor(log_k(W/m)) holds at most k-1, so there are at most
//   (k-1) * (floor(log_k(W/m)) + 1) unsealed shards (unsealedShardsMax),
//   plus the sealed ones, each of at least mergeRrsetsMax/k RRsets. While a
//   merge runs, the flushes it outlasts are added (one merge at a time).
// - Write amplification. Above tier 0 every input of a merge weighs at least
//   m*k^t, so its output weighs at least m*k^(t+1): a record is rewritten at
//   most once per tier above 0: floor(log_k(W/m)) - 1 times (no merge runs in
//   the top tier). In tier 0 each merge adds at least (k-1)*w to its record's
//   shard, so a record is rewritten there at most about k*m / ((k-1)*w)
//   times, each merge writing fewer than k*m RRsets (rewritesMax). With
//   w >= m that is at most max(1, floor(log_k(W/m))) rewrites in all.
// Time tiers (DNSDB's minutes into hours into days) are this policy for a
// steady feed; weights also handle a feed whose rate changes by the hour.
//
// The top tier. Sealed shards would otherwise stay as many as the feed made
// them (a month of flushes: hundreds), and a search costs something per
// shard. With topShardRrsets S (the largest shard a merge may build within
// its memory bound: compact --memory-mb), sealed shards of fewer than S/2
// RRsets (and half the largest file) are merged k at a time, the smallest
// first, into shards of at most S: k of them hold fewer than k*S/2 RRsets,
// so a merge leaves at most ceil(k/2) shards where there were k, all but one
// of them full. Once fewer than k remain under S/2, none is due: settled,
// the sealed shards number at most 2W/S + k - 1. Memory stays that
// of one output shard however many RRsets a top merge reads (the merge
// writes a shard each time it holds S).

import { LIMITS } from '../config/limits.js';

export interface TieredPolicy {
  /** k: shards of one tier merged at once. */
  fanIn: number;
  /** m: shards weighing less than k*m all share tier 0. */
  tierMinRrsets: number;
  /** A merge reads fewer RRsets than this (shards of mergeRrsetsMax/k or more are sealed). */
  mergeRrsetsMax: number;
  /** A merge reads fewer bytes than this (shards of mergeBytesMax/k or more are sealed). */
  mergeBytesMax: number;
  /** S: the top tier merges sealed shards under S/2 RRsets into shards of at most S; none when absent. */
  topShardRrsets?: number;
}

/**
 * Defaults. k = 4: Cassandra's size-tiered default, and the middle of the
 * trade: k = 2 keeps the fewest shards but rewrites each record
 * log_2(W/m) times; k = 8 rewrites a third as often as k = 2 but allows
 * seven shards a tier. m = 10,000: below it shards cost a query more than
 * merging them costs (a merge of 40,000 RRsets takes well under a second),
 * and tier 0 absorbs quiet feeds' small flushes instead of spreading them
 * over five more tiers. mergeRrsetsMax: the RRsets an ingest holds in
 * memory by default, so a background merge needs no more memory than an
 * ingest run; mergeBytesMax: the largest shard file.
 */
export const DEFAULT_POLICY: Readonly<TieredPolicy> = Object.freeze({
  fanIn: 4,
  tierMinRrsets: 10_000,
  mergeRrsetsMax: LIMITS.ingestRrsetsInMemoryMax,
  mergeBytesMax: LIMITS.shardBytesMax,
  topShardRrsets: topShardRrsetsFor(LIMITS.compactMemoryBytesDefault),
});

/** S for a merge that may hold `memoryBytes`: one output shard's table and arrays, at mergeBytesPerRrsetHeld an RRset. */
export function topShardRrsetsFor(memoryBytes: number): number {
  return Math.max(1, Math.min(LIMITS.shardRrsetsMax,
    Math.floor(Math.max(0, memoryBytes - LIMITS.compactBaseBytes) / LIMITS.mergeBytesPerRrsetHeld)));
}

/** What the policy reads of a manifest entry (ShardEntry has it all). */
export interface PolicyShard {
  file: string;
  rrsets: number;
  bytes: number;
  createdAt: number;
  /** RRsets published by ingest that this shard aggregates; absent for shards ingest wrote (their own RRsets). */
  rrsetsIngested?: number;
}

export interface Merge<S extends PolicyShard> {
  /** The size tier merged, or 'top' (sealed shards into shards of topShardRrsets). */
  tier: number | 'top';
  inputs: S[];
}

/** A shard's weight: the published RRsets it stands for. */
export function weightOf(s: PolicyShard): number {
  return s.rrsetsIngested ?? s.rrsets;
}

export function isSealed(s: PolicyShard, p: TieredPolicy): boolean {
  return s.rrsets * p.fanIn >= p.mergeRrsetsMax || s.bytes * p.fanIn >= p.mergeBytesMax;
}

/** The tier of a weight (integer arithmetic: no rounding at exact powers of k). */
export function tierOf(weight: number, p: TieredPolicy): number {
  let tier = 0;
  for (let bound = p.tierMinRrsets * p.fanIn; weight >= bound; bound *= p.fanIn) tier++;
  return tier;
}

/** The next merge, or undefined when no tier holds k unsealed shards. */
export function nextMerge<S extends PolicyShard>(shards: readonly S[], p: TieredPolicy): Merge<S> | undefined {
  const tiers = new Map<number, S[]>();
  for (const s of shards) {
    if (isSealed(s, p)) continue;
    const t = tierOf(weightOf(s), p);
    let list = tiers.get(t);
    if (list === undefined) tiers.set(t, (list = []));
    list.push(s);
  }
  const ready = [...tiers].filter(([, list]) => list.length >= p.fanIn).sort(([a], [b]) => a - b)[0];
  if (ready === undefined) return topMerge(shards, p);
  const [tier, list] = ready;
  const oldest = [...list].sort((a, b) => a.createdAt - b.createdAt || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { tier, inputs: oldest.slice(0, p.fanIn) };
}

/** The top tier's next merge: the k smallest sealed shards under half the top shard's size, when there are k. */
function topMerge<S extends PolicyShard>(shards: readonly S[], p: TieredPolicy): Merge<S> | undefined {
  const top = p.topShardRrsets;
  if (top === undefined) return undefined;
  const small = shards.filter((s) => isSealed(s, p) && s.rrsets * 2 < top && s.bytes * 2 < LIMITS.shardBytesMax * 0.9);
  if (small.length < p.fanIn) return undefined;
  small.sort((a, b) => a.rrsets - b.rrsets || (a.file < b.file ? -1 : a.file > b.file ? 1 : 0));
  return { tier: 'top', inputs: small.slice(0, p.fanIn) };
}

/** Unsealed shards at most once no merge is due, with `published` RRsets ever published. */
export function unsealedShardsMax(published: number, p: TieredPolicy): number {
  return (p.fanIn - 1) * (tierOf(published, p) + 1);
}

/**
 * Times one record may be rewritten when the smallest published shard held
 * `smallest` RRsets and `published` were published in all. In tier 0 every
 * merge adds at least (k-1)*smallest to the record's shard, which leaves
 * tier 0 at k*m; above it, every merge lifts it a tier, and no merge runs in
 * the top tier (its output would weigh more than was ever published).
 */
export function rewritesMax(published: number, smallest: number, p: TieredPolicy): number {
  const k = p.fanIn;
  const w = Math.max(1, smallest);
  const tier0 = w >= k * p.tierMinRrsets ? 0 : Math.floor((k * p.tierMinRrsets - w - 1) / ((k - 1) * w)) + 1;
  return tier0 + Math.max(0, tierOf(published, p) - 1);
}

/** Checks a policy's fields; returns what is wrong, or undefined. */
export function policyProblem(p: TieredPolicy): string | undefined {
  if (!Number.isSafeInteger(p.fanIn) || p.fanIn < 2) return 'the fan-in must be an integer of at least 2';
  if (!Number.isSafeInteger(p.tierMinRrsets) || p.tierMinRrsets < 1) return 'the tier minimum must be a positive integer';
  if (p.mergeRrsetsMax > LIMITS.shardRrsetsMax) return `a merge may read at most ${LIMITS.shardRrsetsMax} RRsets (one shard)`;
  if (p.mergeRrsetsMax < p.fanIn) return 'a merge must be able to read one RRset per input';
  if (p.mergeBytesMax > LIMITS.shardBytesMax) return `a merge may read at most ${LIMITS.shardBytesMax} bytes (one shard)`;
  if (p.topShardRrsets !== undefined && (!Number.isSafeInteger(p.topShardRrsets) || p.topShardRrsets * p.fanIn < p.mergeRrsetsMax)) {
    return 'the top tier\'s shards must hold at least the sealed ones (merge RRsets / fan-in): give more memory';
  }
  return undefined;
}
