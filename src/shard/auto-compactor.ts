// AutoCompactor: background compaction of a data directory that ingest keeps
// publishing to. It watches the manifest (fs.watch, and a poll every
// LIMITS.manifestPollMs for file systems that do not report), asks the
// tiered policy (compaction-policy.ts) for the next merge, and runs it with
// the compactor (compactor.ts mergeShards), one merge at a time, until none
// is due.
//
// What it never does:
// - Block publishing. The merge runs without the manifest lock; its swap
//   takes the lock for milliseconds and replaces only its inputs, so shards
//   published meanwhile survive it.
// - Block a query. Servers keep the old shards mapped until their searches
//   end (search/local/shard-set.ts); the inputs are deleted only after the
//   swap. Nor the caller's event loop: the merge, the opening and checking of
//   its inputs included, runs on a worker thread.
// - Hold unbounded memory. A merge reads fewer than policy.mergeRrsetsMax
//   RRsets (the policy seals bigger shards) and writes one shard: the worker
//   holds that shard's RrsetTable and FlatBuffer, as an ingest run holding
//   --memory-rrsets of the same number does, plus one RRset per input (a
//   merge of 1 M RRsets peaked at 1.2 GB RSS, its mapped inputs included:
//   node dist/bench/compaction.js). This thread holds the manifest.
// - Leave a half-done merge. stop() abandons the merge in flight (its thread
//   is stopped, what it wrote deleted, the manifest untouched) unless its
//   swap has begun, which it lets end. A kill -9 leaves the merge's files to
//   the next swap's cleanup of dead writers (manifest.ts).
//
// One compaction runs per directory at a time (the compaction lock, compactor.ts):
// while `rrscan compact` or another AutoCompactor holds it, this one waits
// for the next poll. A merge that fails (a full disk, a corrupt input) is
// logged and retried after a pause that doubles up to compactRetryMsMax.
//
// Use (a process that publishes, or `rrscan compact --auto`):
//   const compactor = new AutoCompactor({ dataDir, policy, log });  // throws on a bad policy
//   compactor.start();
//   ...
//   await compactor.stop();   // at SIGTERM; then exit

import { existsSync, watch, type FSWatcher } from 'node:fs';
import { LIMITS } from '../config/limits.js';
import { DEFAULT_POLICY, isSealed, nextMerge, policyProblem, unsealedShardsMax, weightOf, type TieredPolicy } from './compaction-policy.js';
import { mergeShards, tryCompactionLock, type CompactSummary } from './compactor.js';
import { MANIFEST_FILE, readManifest } from './manifest.js';
import { silentLog, type Log } from '../lib/log.js';
import { hasCode } from '../errors/catalogue.js';


export interface AutoCompactorOptions {
  dataDir: string;
  /** Fields not given take DEFAULT_POLICY's. */
  policy?: Partial<TieredPolicy>;
  log?: Log;
  /** How often the manifest is read even when fs.watch says nothing (LIMITS.manifestPollMs). */
  pollMs?: number;
}

/** One merge, as logged: the compactor's summary, its tier, and the shards live after its swap. */
export interface MergeReport extends CompactSummary {
  tier: number | 'top';
  shardsAfter: number;
}

export interface CompactorTotals {
  merges: number;
  rrsetsIn: number;
  rrsetsOut: number;
  bytesOut: number;
  seconds: number;
  failures: number;
}


export class AutoCompactor {
  readonly policy: TieredPolicy;
  readonly totals: CompactorTotals = { merges: 0, rrsetsIn: 0, rrsetsOut: 0, bytesOut: 0, seconds: 0, failures: 0 };
  private readonly dataDir: string;
  private readonly log: Log;
  private readonly pollMs: number;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  /** A change seen while a pass ran: run another after it. */
  private again = false;
  private stopping = false;
  private abort: AbortController | undefined;
  private retryAt = 0;
  private retryMs = 0;

  /** Throws when the policy breaks a bound (policyProblem). */
  constructor(opts: AutoCompactorOptions) {
    this.dataDir = opts.dataDir;
    this.policy = { ...DEFAULT_POLICY, ...opts.policy };
    const problem = policyProblem(this.policy);
    if (problem !== undefined) throw new Error(`compaction policy: ${problem}`);
    this.log = opts.log ?? silentLog;
    this.pollMs = opts.pollMs ?? LIMITS.manifestPollMs;
  }

  /** Starts watching and merges what is due now. The timers do not keep the process alive. */
  start(): void {
    if (this.timer !== undefined || this.stopping) return;
    const p = this.policy;
    this.log.info({ dataDir: this.dataDir, fanIn: p.fanIn, tierMinRrsets: p.tierMinRrsets, mergeRrsetsMax: p.mergeRrsetsMax },
      'background compaction started');
    try {
      this.watcher = watch(this.dataDir, (_event, file) => {
        if (file === MANIFEST_FILE) setTimeout(() => this.wake(), LIMITS.manifestSettleMs).unref();
      });
      this.watcher.unref();
    } catch {
      // Directory watching unsupported here: the poll covers it.
    }
    this.timer = setInterval(() => this.wake(), this.pollMs);
    this.timer.unref();
    this.wake();
  }

  /**
   * Stops watching and abandons the merge in flight (deleting what it wrote;
   * its inputs stay live), or lets its swap end if it has begun. Resolves
   * once nothing of it runs.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.watcher?.close();
    if (this.timer !== undefined) clearInterval(this.timer);
    this.abort?.abort(new Error('background compaction stopped'));
    await this.running;
  }

  /** The most shards the policy leaves once no merge is due, for what the directory holds now. */
  shardsMax(): number {
    const shards = readManifest(this.dataDir).shards;
    const published = shards.reduce((n, s) => n + weightOf(s), 0);
    const sealed = shards.filter((s) => isSealed(s, this.policy)).length;
    return unsealedShardsMax(published, this.policy) + sealed;
  }

  private wake(): void {
    if (this.stopping) return;
    if (this.running !== undefined) {
      this.again = true;
      return;
    }
    if (Date.now() < this.retryAt) return;
    this.again = false;
    this.running = this.pass().catch((err: unknown) => this.failed(err)).finally(() => {
      this.running = undefined;
      if (this.again) this.wake();
    });
  }

  /** Merges until none is due, another compaction holds the directory, a merge fails, or stop(). */
  private async pass(): Promise<void> {
    while (!this.stopping && existsSync(this.dataDir)) {
      const release = tryCompactionLock(this.dataDir);
      if (release === undefined) {
        this.log.debug({ dataDir: this.dataDir }, 'another compaction is running; waiting for it');
        return;
      }
      try {
        const merge = nextMerge(readManifest(this.dataDir).shards, this.policy);
        if (merge === undefined) return;
        this.abort = new AbortController();
        const rrsetsIn = merge.inputs.reduce((n, e) => n + e.rrsets, 0);
        this.log.info({ tier: merge.tier, inputs: merge.inputs.map((e) => e.file), rrsetsIn }, 'compaction merging');
        let s: CompactSummary;
        try {
          s = await mergeShards(this.dataDir, merge.inputs, {
            offThread: true, signal: this.abort.signal, label: `auto-compact tier ${merge.tier}`,
            // The memory the policy's top shard size was derived from (compaction-policy.ts topShardRrsetsFor).
            ...(this.policy.topShardRrsets !== undefined ? {
              shardRrsetsMax: this.policy.topShardRrsets,
              memoryBytes: this.policy.topShardRrsets * LIMITS.mergeBytesPerRrsetHeld + LIMITS.compactBaseBytes,
            } : {}),
          });
        } catch (err) {
          if (this.abort.signal.aborted) {
            this.log.info({ dataDir: this.dataDir, tier: merge.tier, inputs: merge.inputs.map((e) => e.file) },
              'compaction abandoned at stop; its inputs stay live');
            return;
          }
          this.failed(err);
          if (hasCode(err, 'COMPACTION_CONFLICT')) continue;
          return;
        }
        this.merged({ ...s, tier: merge.tier, shardsAfter: readManifest(this.dataDir).shards.length });
      } finally {
        this.abort = undefined;
        release();
      }
    }
  }

  private merged(r: MergeReport): void {
    const t = this.totals;
    t.merges++;
    t.rrsetsIn += r.rrsetsIn;
    t.rrsetsOut += r.rrsetsOut;
    t.bytesOut += r.bytesOut;
    t.seconds += r.seconds;
    this.retryMs = 0;
    this.log.info({
      tier: r.tier, inputs: r.inputs, outputs: r.outputs, rrsetsIn: r.rrsetsIn, rrsetsOut: r.rrsetsOut, bytesIn: r.bytesIn,
      bytesOut: r.bytesOut, seconds: Number(r.seconds.toFixed(3)), rrsetsPerSec: Math.round(r.rrsetsIn / Math.max(r.seconds, 1e-3)),
      shards: r.shardsAfter,
    }, 'compaction merged');
  }

  private failed(err: unknown): void {
    this.totals.failures++;
    const conflict = hasCode(err, 'COMPACTION_CONFLICT');
    if (!conflict) {
      this.retryMs = Math.min(Math.max(this.pollMs, this.retryMs * 2), LIMITS.compactRetryMsMax);
      this.retryAt = Date.now() + this.retryMs;
    }
    this.log.warn({ dataDir: this.dataDir, error: err instanceof Error ? err.message : String(err), retryMs: conflict ? 0 : this.retryMs },
      'compaction failed; nothing was published');
  }
}
