// A fixed RrsetTable for checking that the shard writer's output does not
// change: the same table always gives the same shard bytes, so a refactoring
// of buildShardBody can be proved byte-identical by comparing one hash
// (bench/shard-bytes.ts prints it; test/unit/shard/shard-bytes.test.ts pins
// it for a small table).
//
// The demo stream gives realistic owners, types, bailiwicks and shared rdata,
// but few owners with many RRsets. Extra owners are added whose RRsets
// exercise every step of the RRset order: more and fewer RRsets than the
// writer sorts by insertion, several bailiwicks and rrtypes under one owner,
// and rdata lists whose text order differs from their wire order or where
// one list is a prefix of another.

import { DEMO_NOW_DEFAULT, demoObservations } from '../src/demo/generate.js';
import { rdataFromText } from '../src/dns/rdata/index.js';
import { RR } from '../src/dns/rrtype.js';
import type { Observation } from '../src/model/observation.js';
import { RrsetTable } from '../src/shard/rrset-table.js';

/** The createdAt every check passes to buildShardBody. */
export const SHARD_INPUT_NOW = DEMO_NOW_DEFAULT;
export const SHARD_INPUT_SEED = 1;

function observation(rrname: string, rrtype: number, bailiwick: string, texts: readonly string[], t: number): Observation {
  return {
    rrname, rrtype, bailiwick, count: 1 + (t % 7),
    rdata: texts.map((text) => ({ text, wire: rdataFromText(rrtype, text) })),
    timeFirst: SHARD_INPUT_NOW - 86_400 * (1 + (t % 50)), timeLast: SHARD_INPUT_NOW - 3_600 * (t % 20),
    zoneTimeFirst: t % 3 === 0 ? SHARD_INPUT_NOW - 86_400 * 90 : 0, zoneTimeLast: t % 3 === 0 ? SHARD_INPUT_NOW - 86_400 : 0,
  };
}

/** Owners with 1 to 60 RRsets each, of mixed types, bailiwicks and rdata lists. */
function* orderEdgeCases(): Generator<Observation> {
  const bailiwicks = ['example.', 'flux.example.', 'example-1.', 'example.'];
  let t = 0;
  for (let owner = 0; owner < 12; owner++) {
    const rrname = owner % 2 === 0 ? `flux${owner}.example.` : `flux${owner}.flux.example.`;
    const rrsets = [1, 2, 15, 16, 17, 18, 31, 60][owner % 8]!;
    for (let k = 0; k < rrsets; k++, t++) {
      const bailiwick = bailiwicks[(k >> 2) % bailiwicks.length]!;
      switch (k % 4) {
        case 0: // "192.0.2.10" sorts before "192.0.2.2" as text, after it as wire.
          yield observation(rrname, RR.A, bailiwick, [`192.0.2.${k % 11}`, `192.0.2.${10 + (k % 5)}`], t);
          break;
        case 1: // One address alone: a prefix of case 0's lists.
          yield observation(rrname, RR.A, bailiwick, [`192.0.2.${k % 11}`], t);
          break;
        case 2:
          yield observation(rrname, RR.NS, bailiwick, [`ns${k % 3}.example.`, `ns${k % 5}-b.example.`], t);
          break;
        default:
          yield observation(rrname, RR.TXT, bailiwick, [`"v=${k % 6}"`, `"v=${k % 6}" "x"`], t);
      }
    }
  }
}

/** The demo's first `records` RRsets (seed and now fixed) and the edge cases above, aggregated. */
export function shardInputTable(records: number): RrsetTable {
  const table = new RrsetTable();
  for (const o of demoObservations({ records, seed: SHARD_INPUT_SEED, now: SHARD_INPUT_NOW })) table.add(o);
  for (const o of orderEdgeCases()) table.add(o);
  return table;
}
