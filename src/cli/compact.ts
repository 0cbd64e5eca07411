// `rrscan compact`: merge every shard into as few as possible, once; with
// --auto, keep merging in the background as the tiered policy asks.

import type { Command } from 'commander';
import { InvalidArgumentError } from 'commander';
import { mkdirSync } from 'node:fs';
import { LIMITS } from '../config/limits.js';
import { AutoCompactor } from '../shard/auto-compactor.js';
import type { TieredPolicy } from '../shard/compaction-policy.js';
import { compact, type CompactSummary } from '../shard/compactor.js';
import { dataOption, integer, policyOf, withPolicyOptions, type PolicyFlags } from './flags.js';

/** `rrscan compact --auto`: an AutoCompactor until SIGTERM or SIGINT, which abandon a merge in flight and exit 0. */
async function compactInBackground(dataDir: string, policy: Partial<TieredPolicy>): Promise<void> {
  const { log } = await import('../server/log.js');
  mkdirSync(dataDir, { recursive: true });
  const compactor = new AutoCompactor({ dataDir, policy, log });
  // The compactor's timers let a process exit; this one holds it until a signal.
  const alive = setInterval(() => undefined, 1 << 30);
  compactor.start();
  const p = compactor.policy;
  console.log(`rrscan compacting ${dataDir} in the background: fan-in ${p.fanIn}, tier minimum ${p.tierMinRrsets} RRsets, ` +
    `merges under ${p.mergeRrsetsMax} RRsets, sealed shards merged into shards of up to ${p.topShardRrsets ?? 'n/a'} RRsets; ` +
    `${compactor.shardsMax()} shard(s) at most for the data there now`);
  const stop = () => {
    void compactor.stop().then(() => {
      clearInterval(alive);
      const t = compactor.totals;
      log.info({ merges: t.merges, rrsetsIn: t.rrsetsIn, rrsetsOut: t.rrsetsOut, bytesOut: t.bytesOut,
        seconds: Number(t.seconds.toFixed(3)), failures: t.failures }, 'background compaction stopped');
      log.flush(() => process.exit(0));
    });
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

export function registerCompactCommand(program: Command): void {
  withPolicyOptions(program.command('compact')
    .description('merge all shards into as few as possible, aggregating duplicate RRsets; with --auto, keep merging ' +
      'in the background as the tiered policy asks while ingest publishes (until SIGTERM)')
    .addOption(dataOption())
    .option('--workers <n>', 'threads, each merging a range of owner names (default: one per core; not with --auto, ' +
      'whose merges take one thread)', integer('--workers', 1, LIMITS.ingestThreadsMax))
    .option('--auto', 'run until SIGTERM, merging k shards of a size tier whenever a tier holds k (logs each merge)'))
    .action(async (o: { data: string; workers?: number; auto?: boolean } & PolicyFlags) => {
      const policy = policyOf(o);
      if (o.auto) {
        if (o.workers !== undefined) throw new InvalidArgumentError('--workers is for a full compaction; --auto merges on one thread');
        await compactInBackground(o.data, policy);
        return;
      }
      if (o.fanIn !== undefined || o.tierMinRrsets !== undefined || o.mergeRrsetsMax !== undefined) {
        throw new InvalidArgumentError('--fan-in, --tier-min-rrsets and --merge-rrsets-max go with --auto');
      }
      let s: CompactSummary;
      try {
        s = await compact(o.data, {
          ...(o.workers !== undefined ? { threads: o.workers } : {}),
          ...(o.memoryMb !== undefined ? { memoryBytes: o.memoryMb * 1_048_576 } : {}),
        });
      } catch (err) {
        // compact() deletes the shards it wrote before it throws (a full disk
        // among the reasons), so the live shards are as they were.
        console.error(`rrscan compact: ${err instanceof Error ? err.message : String(err)}; the shards were left as they were`);
        process.exitCode = 1;
        return;
      }
      if (s.alreadyCompact) {
        console.log(`compact: ${s.inputShards} shards, ${s.rrsetsIn} RRsets, already compact (no RRset in two shards, ` +
          'and a merge would write as many shards); left as they are');
        return;
      }
      console.log(`compact: ${s.inputShards} shard(s), ${s.rrsetsIn} RRsets in -> ${s.outputShards} shard(s), ` +
        `${s.rrsetsOut} RRsets, ${s.seconds.toFixed(2)} s`);
    });
}
