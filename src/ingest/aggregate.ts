// Aggregation of observations into RRsets.
//
// Key: (rrname, rrtype, bailiwick, rdata set). Merging takes the earliest
// first sighting, the latest last sighting (sensor and zone separately) and
// sums counts. The rdata set of each RRset is deduplicated and ordered by
// wire form, so two sightings of the same records in another order meet.
//
// Memory is the caller's to bound: `size` tells how many distinct RRsets are
// held, and ingest drains the aggregator into a shard when it passes the
// --memory budget (LIMITS.ingestRrsetsInMemoryMax by default).

import type { Observation, Rdata } from './observation.js';

function compareBytes(a: Uint8Array, b: Uint8Array): number {
  return Buffer.compare(a, b);
}

/** Sort by wire and drop duplicates; returns the same array when already canonical. */
export function canonicalRdata(rdata: Rdata[]): Rdata[] {
  if (rdata.length <= 1) return rdata;
  const sorted = rdata.slice().sort((x, y) => compareBytes(x.wire, y.wire));
  const out: Rdata[] = [sorted[0]!];
  for (let i = 1; i < sorted.length; i++) {
    if (compareBytes(sorted[i]!.wire, out[out.length - 1]!.wire) !== 0) out.push(sorted[i]!);
  }
  return out;
}

export function minNonZero(a: number, b: number): number {
  if (a === 0) return b;
  if (b === 0) return a;
  return a < b ? a : b;
}

/** Folds `from` into `into` (same aggregation key). */
export function mergeInto(into: Observation, from: Observation): void {
  into.count += from.count;
  into.timeFirst = minNonZero(into.timeFirst, from.timeFirst);
  into.timeLast = Math.max(into.timeLast, from.timeLast);
  into.zoneTimeFirst = minNonZero(into.zoneTimeFirst, from.zoneTimeFirst);
  into.zoneTimeLast = Math.max(into.zoneTimeLast, from.zoneTimeLast);
}

export function aggregationKey(o: Observation): string {
  let key = `${o.rrname}\u0000${o.rrtype}\u0000${o.bailiwick}`;
  for (const r of o.rdata) key += `\u0000${r.text}`;
  return key;
}

export class RrsetAggregator {
  private readonly sets = new Map<string, Observation>();
  observations = 0;

  get size(): number {
    return this.sets.size;
  }

  add(o: Observation): void {
    this.observations++;
    const rdata = canonicalRdata(o.rdata);
    const obs = rdata === o.rdata ? o : { ...o, rdata };
    const key = aggregationKey(obs);
    const have = this.sets.get(key);
    if (have) mergeInto(have, obs);
    else this.sets.set(key, { ...obs });
  }

  /** Hands over every RRset held and empties the aggregator. */
  drain(): Observation[] {
    const out = [...this.sets.values()];
    this.sets.clear();
    return out;
  }
}
