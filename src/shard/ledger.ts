// The input ledger of a data directory: which input files its shards were
// made from, by the SHA-256 of their bytes, so that `rrscan ingest` given a
// file again skips it instead of counting its sightings twice.
//
// The ledger lives in the manifest's shard entries (ShardEntry.inputs), so it
// is published in the same atomic swap as the data it describes: a run that
// dies publishes neither. Rule: a run records ALL its input files ONCE, on
// the entry of the LAST shard it publishes (an ingest's last spill, a
// merge's last output). Shards leave the manifest only through a merge,
// whose swap replaces its inputs by its outputs and records the union of its
// inputs' records on its last output (mergedInputs), so a digest, once
// published, stays in the manifest however the run's shards are later merged,
// some together and some not. Recording on every shard of a run would say no
// more and multiply the manifest by the shards a run spills.
//
// Live dnstap flushes have no input files and record nothing. A run that
// publishes no shard (its files hold no records) records nothing either:
// ingesting them again adds nothing. The ledger is bounded (boundLedger).

import { LIMITS } from '../config/limits.js';
import type { InputRecord, Manifest, ShardEntry } from './manifest.js';

export type { InputRecord };

/** Where the ledger records a digest. */
export interface Recorded {
  shard: string;
  input: InputRecord;
}

/** Every digest the manifest records, with the shard that records it. */
export function ledgerOf(m: Manifest): Map<string, Recorded> {
  const out = new Map<string, Recorded>();
  for (const s of m.shards) for (const input of s.inputs ?? []) out.set(input.sha256, { shard: s.file, input });
  return out;
}

/** The records of `entries`, one per digest (its latest ingest): what a merge of them records. */
export function mergedInputs(entries: readonly ShardEntry[]): InputRecord[] {
  const byDigest = new Map<string, InputRecord>();
  for (const e of entries) {
    for (const input of e.inputs ?? []) {
      const seen = byDigest.get(input.sha256);
      if (seen === undefined || input.at > seen.at) byDigest.set(input.sha256, input);
    }
  }
  return [...byDigest.values()];
}

/** `shards` with `inputs` recorded on the last one (see the rule at the top); unchanged when there are none. */
export function recordOnLast(shards: readonly ShardEntry[], inputs: readonly InputRecord[]): ShardEntry[] {
  if (inputs.length === 0 || shards.length === 0) return [...shards];
  const last = shards[shards.length - 1]!;
  return [...shards.slice(0, -1), { ...last, inputs: [...inputs] }];
}

/**
 * `shards` with the ledger cut to `max` records by forgetting the oldest
 * (their `at`; ties by digest, so every writer forgets the same ones), and
 * how many were forgotten. A forgotten file is ingested again if it is
 * given again: the caller warns.
 */
export function boundLedger(shards: readonly ShardEntry[], max: number = LIMITS.ledgerInputsMax):
{ shards: ShardEntry[]; forgotten: number; newestForgotten?: number } {
  const all = shards.flatMap((s) => s.inputs ?? []);
  if (all.length <= max) return { shards: [...shards], forgotten: 0 };
  const order = (a: InputRecord, b: InputRecord) => a.at - b.at || (a.sha256 < b.sha256 ? -1 : a.sha256 > b.sha256 ? 1 : 0);
  const dropped = new Set(all.sort(order).slice(0, all.length - max));
  const out = shards.map((s) => {
    if (s.inputs === undefined || !s.inputs.some((i) => dropped.has(i))) return s;
    const kept = s.inputs.filter((i) => !dropped.has(i));
    const { inputs: _, ...rest } = s;
    return kept.length > 0 ? { ...rest, inputs: kept } : rest;
  });
  return { shards: out, forgotten: dropped.size, newestForgotten: [...dropped].reduce((n, i) => Math.max(n, i.at), 0) };
}
