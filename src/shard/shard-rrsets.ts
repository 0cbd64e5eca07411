// Reads a shard's RRsets back as Observations, in the shard's own order
// (reversed owner, rrtype, bailiwick, rdata), with the same sort key the
// writer used. Compaction merges shards through this.

import type { Observation, Rdata } from '../model/observation.js';
import { reverseName } from '../dns/name.js';
import { ShardReader } from './shard-reader.js';

export interface KeyedRrset {
  key: string;
  rrset: Observation;
}

/** The writer's sort key (shard-writer.ts buildShardBody) for an RRset. */
export function rrsetSortKey(reversedOwner: string, o: Observation): string {
  let k = `${reversedOwner}\u0001${o.rrtype.toString(16).padStart(4, '0')}\u0001${o.bailiwick}`;
  for (const r of o.rdata) k += `\u0001${r.text}`;
  return k;
}

/** The RRsets of owner rows [fromOwner, toOwner) (all by default), in the shard's order. */
export function* shardRrsets(s: ShardReader, fromOwner = 0, toOwner = s.owners.offsets.length - 1): Generator<KeyedRrset> {
  const rs = s.rrsets;
  const rdataCache = new Map<number, Rdata>();
  for (let o = fromOwner; o < toOwner; o++) {
    const rev = ShardReader.record(s.owners, o);
    const rrname = reverseName(rev);
    for (let i = s.ownerStarts[o]!; i < s.ownerStarts[o + 1]!; i++) {
      const rdata: Rdata[] = [];
      for (let j = rs.rdataStarts[i]!; j < rs.rdataStarts[i + 1]!; j++) {
        const row = rs.rdataRows[j]!;
        let r = rdataCache.get(row);
        if (!r) {
          r = { text: ShardReader.record(s.rdata.text, row), wire: Uint8Array.from(s.rdataWire(row)) };
          if (rdataCache.size > 100_000) rdataCache.clear();
          rdataCache.set(row, r);
        }
        rdata.push(r);
      }
      const rrset: Observation = {
        rrname, rrtype: rs.rrtype[i]!, bailiwick: ShardReader.record(s.bailiwicks, rs.bailiwick[i]!), rdata,
        count: rs.count[i]!, timeFirst: rs.timeFirst[i]!, timeLast: rs.timeLast[i]!,
        zoneTimeFirst: rs.zoneTimeFirst[i]!, zoneTimeLast: rs.zoneTimeLast[i]!,
      };
      yield { key: rrsetSortKey(rev, rrset), rrset };
    }
  }
}
