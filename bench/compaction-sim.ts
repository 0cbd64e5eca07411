// A simulation of the background compaction policy (src/shard/compaction-policy.ts)
// over a sequence of published shards, with no files: what the manifest would
// list after each flush, what each merge would write, and how often each
// record is rewritten. bench/compaction.ts runs a month of flushes through
// it; test/fuzz/compaction-policy.fuzz.ts checks the policy's bounds on
// random sequences with it.
//
// Time: merges run one at a time, as AutoCompactor runs them, each taking
// its input RRsets / `mergeRrsetsPerSec`; flushes that arrive meanwhile wait
// in the manifest. A rate of Infinity makes every merge instant, which is
// the state the policy's shard count bound speaks of (no merge due).

import { nextMerge, isSealed, weightOf, type PolicyShard, type TieredPolicy } from '../src/shard/compaction-policy.js';

export interface SimShard extends PolicyShard {
  /** Most times any record of this shard has been rewritten by a merge. */
  rewrites: number;
}

/** The merged shard's RRsets and bytes: between the largest input (all duplicates) and the sum (none). */
export type Aggregate = (inputs: readonly SimShard[]) => { rrsets: number; bytes: number };

/** No duplicates across shards: the worst case for write amplification. */
export const noDuplicates: Aggregate = (inputs) => ({
  rrsets: inputs.reduce((n, s) => n + s.rrsets, 0), bytes: inputs.reduce((n, s) => n + s.bytes, 0),
});

/** The sum less a share `dup` of what the inputs beyond the largest hold (0: no repeats; 1: all repeats). */
export const withDuplicates = (dup: number): Aggregate => (inputs) => {
  const sum = inputs.reduce((n, s) => n + s.rrsets, 0);
  const largest = Math.max(...inputs.map((s) => s.rrsets));
  const rrsets = Math.max(largest, Math.round(sum - dup * (sum - largest)));
  return { rrsets, bytes: Math.round((inputs.reduce((n, s) => n + s.bytes, 0) * rrsets) / sum) };
};

export class PolicySim {
  readonly shards: SimShard[] = [];
  now = 0;
  published = 0;
  flushes = 0;
  smallest = Infinity;
  /** RRsets written by merges, and the merges. */
  written = 0;
  merges = 0;
  /** Highest shard count seen right after a flush, and the highest unsealed count once no merge was due. */
  maxShards = 0;
  maxSettledUnsealed = 0;
  private seq = 0;
  private running: { inputs: Set<SimShard>; output: SimShard; endsAt: number } | undefined;

  constructor(readonly policy: TieredPolicy, readonly aggregate: Aggregate = noDuplicates,
    readonly mergeRrsetsPerSec = Infinity) {}

  /** A flush of `rrsets` RRsets at time `at` (seconds); merges due by then run first. */
  publish(rrsets: number, bytes: number, at: number): void {
    this.advance(at);
    this.shards.push({ file: `f${String(this.seq++).padStart(9, '0')}`, rrsets, bytes, createdAt: at, rewrites: 0 });
    this.published += rrsets;
    this.flushes++;
    this.smallest = Math.min(this.smallest, rrsets);
    this.maxShards = Math.max(this.maxShards, this.shards.length);
    this.advance(at);
  }

  /** Runs merges until time `to`, starting new ones as the policy asks. */
  advance(to: number): void {
    for (;;) {
      if (this.running !== undefined) {
        if (this.running.endsAt > to) break;
        this.finish();
        continue;
      }
      const m = nextMerge(this.shards, this.policy);
      if (m === undefined) {
        this.maxSettledUnsealed = Math.max(this.maxSettledUnsealed, this.shards.filter((s) => !isSealed(s, this.policy)).length);
        break;
      }
      const rrsetsIn = m.inputs.reduce((n, s) => n + s.rrsets, 0);
      const { rrsets, bytes } = this.aggregate(m.inputs);
      const start = this.now;
      const endsAt = start + rrsetsIn / this.mergeRrsetsPerSec;
      this.running = {
        inputs: new Set(m.inputs),
        endsAt,
        output: {
          file: `m${String(this.seq++).padStart(9, '0')}`, rrsets, bytes, createdAt: endsAt,
          rrsetsIngested: m.inputs.reduce((n, s) => n + weightOf(s), 0),
          rewrites: Math.max(...m.inputs.map((s) => s.rewrites)) + 1,
        },
      };
    }
    this.now = Math.max(this.now, to);
  }

  private finish(): void {
    const r = this.running!;
    this.running = undefined;
    // The swap replaces exactly the inputs; flushes published meanwhile stay.
    const kept = this.shards.filter((s) => !r.inputs.has(s));
    this.shards.length = 0;
    this.shards.push(...kept, r.output);
    this.now = r.endsAt;
    this.written += r.output.rrsets;
    this.merges++;
  }

  /** Lets every due merge finish (an idle feed). */
  settle(): void {
    this.advance(Infinity);
  }

  get worstRewrites(): number {
    return this.shards.reduce((n, s) => Math.max(n, s.rewrites), 0);
  }
}
