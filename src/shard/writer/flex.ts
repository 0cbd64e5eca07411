// The flex sections of a shard: what regex and glob searches scan. Flex
// names are the owner names forward (as users write patterns), each with one
// entry per rrtype it owns; flex rdata are the distinct presentation values
// of name and text rrtypes, each with one entry per (rrtype, rdata). Both
// carry a trigram index over their blob, and each entry carries the first and
// last sighting, so a time fence filters without touching the RRsets.

import { isFlexRdataType } from '../../dns/rrtype.js';
import { minNonZero } from '../../model/sighting.js';
import { Column } from '../rrset-table.js';
import { buildTrigramIndex, type TrigramIndexParts } from '../trigram-index.js';
import { gatherBlob, sameRecord, sortBlob, type BlobParts } from './blobs.js';
import type { BlobView } from '../interned-blob.js';
import { sortRecords } from '../record-sort.js';
import type { RdataParts } from './rdata.js';
import { firstSeen, lastSeen, type RrsetColumns } from './rrsets.js';

/** The shard's FlexNames table (schema/shard.fbs). */
export interface FlexNamesParts {
  /** Owner names forward, sorted. */
  names: BlobParts;
  trigrams: TrigramIndexParts;
  /** The owner rank (row of the owners column) of each forward name. */
  owner: Uint32Array;
  /** Entries of name k are entry*[entryStarts[k] .. entryStarts[k+1]). */
  entryStarts: Uint32Array;
  entryType: Uint16Array;
  entryFirst: Uint32Array;
  entryLast: Uint32Array;
}

/**
 * Sorts the owners by forward name and gives each one entry per rrtype,
 * spanning the sightings of that owner's RRsets of that type.
 * `names` are the owner names by id, `ownerRank[id]` the rank of owner id,
 * whose RRsets are rows ownerStarts[rank] .. ownerStarts[rank+1] of `rrsets`.
 */
export function buildFlexNames(names: BlobView, ownerRank: Uint32Array, ownerStarts: Uint32Array,
  rrsets: RrsetColumns): FlexNamesParts {
  const nOwners = ownerRank.length;
  // Owner names are distinct, so sorting them by id or by rank gives one order.
  const forward = sortBlob(names);
  const nameOrder = new Uint32Array(nOwners);
  for (let k = 0; k < nOwners; k++) nameOrder[k] = ownerRank[forward.order[k]!]!;
  const entryStarts = new Uint32Array(nOwners + 1);
  const eType = new Column(Uint16Array), eFirst = new Column(Uint32Array), eLast = new Column(Uint32Array);
  for (let k = 0; k < nOwners; k++) {
    const rank = nameOrder[k]!;
    entryStarts[k] = eType.length;
    // RRsets of one owner are sorted by rrtype, so each type is one run.
    for (let i = ownerStarts[rank]!; i < ownerStarts[rank + 1]!; i++) {
      const first = firstSeen(rrsets, i), last = lastSeen(rrsets, i);
      const j = eType.length - 1;
      if (j >= entryStarts[k]! && eType.get(j) === rrsets.rrtype[i]) {
        eFirst.set(j, minNonZero(eFirst.get(j), first));
        eLast.set(j, Math.max(eLast.get(j), last));
      } else {
        eType.push(rrsets.rrtype[i]!); eFirst.push(first); eLast.push(last);
      }
    }
  }
  entryStarts[nOwners] = eType.length;
  return {
    names: forward.sorted, trigrams: buildTrigramIndex({ blob: forward.sorted.bytes, offsets: forward.sorted.offsets }),
    owner: nameOrder, entryStarts, entryType: eType.view(), entryFirst: eFirst.view(), entryLast: eLast.view(),
  };
}

/** The shard's FlexRdata table (schema/shard.fbs). */
export interface FlexRdataParts {
  /** Distinct presentation values, sorted. */
  values: BlobParts;
  trigrams: TrigramIndexParts;
  /** Entries of value k are entry*[entryStarts[k] .. entryStarts[k+1]). */
  entryStarts: Uint32Array;
  entryType: Uint16Array;
  entryRdata: Uint32Array;
  entryFirst: Uint32Array;
  entryLast: Uint32Array;
}

/**
 * The distinct values of flex rdata types, sorted by (text, rrtype): equal
 * texts of several types form one value with one entry per rdata, spanning
 * the sightings of the RRsets that hold it.
 */
export function buildFlexRdata(rdata: RdataParts, rrsets: RrsetColumns): FlexRdataParts {
  const { textBlob, type, rdataRrset } = rdata;
  const flexIds = new Column(Uint32Array), flexTypes = new Column(Uint32Array);
  for (let id = 0; id < type.length; id++) {
    if (isFlexRdataType(type[id]!)) { flexIds.push(id); flexTypes.push(type[id]!); }
  }
  const flexTexts = gatherBlob(textBlob, flexIds.view());
  const flexOrder = sortRecords(flexTexts.bytes, flexTexts.offsets, flexTypes.view());
  const values = new Column(Uint32Array); // the record of flexTexts that each value was taken from
  const vStarts = new Column(Uint32Array);
  const vType = new Column(Uint16Array), vRdata = new Column(Uint32Array);
  const vFirst = new Column(Uint32Array), vLast = new Column(Uint32Array);
  for (let k = 0; k < flexOrder.length; k++) {
    const r = flexOrder[k]!;
    const id = flexIds.get(r);
    if (values.length === 0 || !sameRecord(flexTexts, values.get(values.length - 1), flexTexts, r)) {
      values.push(r);
      vStarts.push(vType.length);
    }
    let first = 0, last = 0;
    for (let j = rdataRrset.starts[id]!; j < rdataRrset.starts[id + 1]!; j++) {
      const i = rdataRrset.rows[j]!;
      first = minNonZero(first, firstSeen(rrsets, i));
      last = Math.max(last, lastSeen(rrsets, i));
    }
    vType.push(type[id]!); vRdata.push(id); vFirst.push(first); vLast.push(last);
  }
  vStarts.push(vType.length);
  const blob = gatherBlob(flexTexts, values.view());
  return {
    values: blob, trigrams: buildTrigramIndex({ blob: blob.bytes, offsets: blob.offsets }),
    entryStarts: vStarts.view(), entryType: vType.view(), entryRdata: vRdata.view(), entryFirst: vFirst.view(), entryLast: vLast.view(),
  };
}
