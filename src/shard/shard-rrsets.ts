// Reads a shard's RRsets back as Observations, in the shard's own order
// (rrset-order.ts), each with its sort key: for tests and tools that look at
// a shard's contents. Compaction merges on the shards' bytes instead
// (shard-merge.ts), in the same order.

import type { Observation, Rdata } from '../model/observation.js';
import { reverseName } from '../dns/name.js';
import type { ShardReader } from './shard-reader.js';
import { blobRecord } from './blob.js';
import { rrsetKey } from './rrset-order.js';

export interface KeyedRrset {
  key: string;
  rrset: Observation;
}

/** An RRset's sort key (rrset-order.ts rrsetKey), given its owner reversed. */
export function rrsetSortKey(reversedOwner: string, o: Observation): string {
  return rrsetKey(reversedOwner, o.rrtype, o.bailiwick, o.rdata.map((r) => r.text));
}

/** The RRsets of owner rows [fromOwner, toOwner) (all by default), in the shard's order. */
export function* shardRrsets(s: ShardReader, fromOwner = 0, toOwner = s.owners.offsets.length - 1): Generator<KeyedRrset> {
  const rs = s.rrsets;
  const rdataCache = new Map<number, Rdata>();
  for (let o = fromOwner; o < toOwner; o++) {
    const rev = blobRecord(s.owners, o);
    const rrname = reverseName(rev);
    for (let i = s.ownerStarts[o]!; i < s.ownerStarts[o + 1]!; i++) {
      const rdata: Rdata[] = [];
      for (let j = rs.rdataStarts[i]!; j < rs.rdataStarts[i + 1]!; j++) {
        const row = rs.rdataRows[j]!;
        let r = rdataCache.get(row);
        if (!r) {
          r = { text: blobRecord(s.rdata.text, row), wire: Uint8Array.from(s.rdataWire(row)) };
          if (rdataCache.size > 100_000) rdataCache.clear();
          rdataCache.set(row, r);
        }
        rdata.push(r);
      }
      const rrset: Observation = {
        rrname, rrtype: rs.rrtype[i]!, bailiwick: blobRecord(s.bailiwicks, rs.bailiwick[i]!), rdata,
        count: rs.count[i]!, timeFirst: rs.timeFirst[i]!, timeLast: rs.timeLast[i]!,
        zoneTimeFirst: rs.zoneTimeFirst[i]!, zoneTimeLast: rs.zoneTimeLast[i]!,
      };
      yield { key: rrsetSortKey(rev, rrset), rrset };
    }
  }
}
