// Flags that more than one command takes, and how their values are read:
// integers within bounds, the data directory, the ClickHouse database, and
// the background compaction policy's flags. Each is defined once, here or
// in the one command's file that takes it.

import { Command, InvalidArgumentError, Option } from 'commander';
import { LIMITS } from '../config/limits.js';
import { DEFAULT_POLICY, topShardRrsetsFor, type TieredPolicy } from '../shard/compaction-policy.js';

/** Exit status when the command's input is wrong (a bad ingest file, a data directory that is not there); 1 is any other failure. */
export const EXIT_BAD_INPUT = 2;

export function integer(name: string, min = 0, max = Number.MAX_SAFE_INTEGER) {
  return (v: string): number => {
    if (!/^-?\d+$/.test(v) || Number(v) < min || Number(v) > max) {
      throw new InvalidArgumentError(max === Number.MAX_SAFE_INTEGER ? `${name} must be an integer >= ${min}`
        : `${name} must be an integer from ${min} to ${max}`);
    }
    return Number(v);
  };
}

export const dataOption = () => new Option('--data <dir>', 'data directory (shards, manifest, keys)').makeOptionMandatory();
export const CLICKHOUSE_DATABASE_DEFAULT = 'rrscan';
export const clickhouseDatabaseOption = () => new Option('--clickhouse-database <name>', 'ClickHouse database of the tables')
  .default(CLICKHOUSE_DATABASE_DEFAULT);

// The background compaction policy's flags (compaction-policy.ts), for every
// command that runs an AutoCompactor.
export interface PolicyFlags {
  fanIn?: number;
  tierMinRrsets?: number;
  mergeRrsetsMax?: number;
  memoryMb?: number;
}

/** Adds the policy's flags to `cmd`: compact --auto and ingest --listen (--compact auto) take the same. */
export function withPolicyOptions(cmd: Command): Command {
  for (const o of policyOptions()) cmd.addOption(o);
  return cmd;
}

const policyOptions = () => [
  new Option('--fan-in <k>', `background compaction: shards of one tier merged at once (default ${DEFAULT_POLICY.fanIn})`)
    .argParser(integer('--fan-in', 2, 64)),
  new Option('--tier-min-rrsets <n>', 'background compaction: shards standing for fewer than k times this many RRsets share ' +
    `the lowest tier (default ${DEFAULT_POLICY.tierMinRrsets})`).argParser(integer('--tier-min-rrsets', 1)),
  new Option('--merge-rrsets-max <n>', 'background compaction: a merge reads fewer RRsets than this (bounds its memory; ' +
    `shards of a k-th of it are not merged again; default ${DEFAULT_POLICY.mergeRrsetsMax})`)
    .argParser(integer('--merge-rrsets-max', 2, LIMITS.shardRrsetsMax)),
  memoryOption(),
];

/** Anonymous memory a compaction may hold; for --auto and background merges, it sizes the top tier's shards. */
const memoryOption = () => new Option('--memory-mb <n>', 'compaction: anonymous memory a merge may hold, which sizes its output ' +
  `shards (about ${LIMITS.mergeBytesPerRrsetHeld} bytes an RRset; default ${LIMITS.compactMemoryBytesDefault / 1_048_576})`)
  .argParser(integer('--memory-mb', Math.ceil(LIMITS.compactBaseBytes / 1_048_576) + 64, 1 << 20));

export function policyOf(o: PolicyFlags): Partial<TieredPolicy> {
  return {
    ...(o.fanIn !== undefined ? { fanIn: o.fanIn } : {}),
    ...(o.tierMinRrsets !== undefined ? { tierMinRrsets: o.tierMinRrsets } : {}),
    ...(o.mergeRrsetsMax !== undefined ? { mergeRrsetsMax: o.mergeRrsetsMax } : {}),
    ...(o.memoryMb !== undefined ? { topShardRrsets: topShardRrsetsFor(o.memoryMb * 1_048_576) } : {}),
  };
}
