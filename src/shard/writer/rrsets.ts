// The RRsets' side of a shard: owners and bailiwicks ranked in byte order,
// the RRsets in the shard's order (rrset-order.ts), and their columns in that
// order. The RRsets arrive interned in columns (RrsetTable), so ordering them
// compares small integers and only breaks rare ties on the rdata strings.

import assert from 'node:assert/strict';
import { minNonZero } from '../../model/sighting.js';
import type { RrsetTable } from '../rrset-table.js';
import { compareRrsetTails, sortRrsets, type RrsetOrder } from '../rrset-order.js';
import { ranksOf, reversedNames, sortBlob, type SortedBlob } from './blobs.js';

/** Owner names (reversed) and bailiwicks in byte order, and each interned id's rank in it. */
export interface NameRanks {
  /** The shard's owners column; order[k] is the owner id of rank k. */
  owners: SortedBlob;
  ownerRank: Uint32Array;
  /** The shard's bailiwicks column; RRsets refer to a bailiwick by its rank. */
  bailiwicks: SortedBlob;
  bailiwickRank: Uint32Array;
}

/**
 * Ranks the interned owners by reversed name (the first part of the RRset
 * order, and how the owners column is searched) and the bailiwicks by name.
 * The sorted blobs are stored as they are.
 */
export function rankNames(table: RrsetTable): NameRanks {
  const owners = sortBlob(reversedNames(table.names.view()));
  const bailiwicks = sortBlob(table.bailiwicks.view());
  return { owners, ownerRank: ranksOf(owners.order), bailiwicks, bailiwickRank: ranksOf(bailiwicks.order) };
}

/**
 * The table's RRset rows in the shard's order, grouped by owner rank. Every
 * interned owner name owns at least one RRset (RrsetTable keeps bailiwicks
 * apart for that), so ownerStarts ascends strictly and is the shard's column.
 */
export function orderRrsets(table: RrsetTable, ranks: NameRanks): RrsetOrder {
  const compareTails = compareRrsetTails({
    rrtype: table.rrtype.view(), bailiwick: table.bailiwick.view(), bailiwickRank: ranks.bailiwickRank,
    rdataStarts: table.rdataStarts.view(), rdataRows: table.rdataRows.view(), rdataText: table.rdataText.view(),
  });
  const sorted = sortRrsets(table.owner.view(), ranks.ownerRank, compareTails);
  const { ownerStarts } = sorted;
  for (let k = 0; k + 1 < ownerStarts.length; k++) {
    if (ownerStarts[k]! >= ownerStarts[k + 1]!) assert.fail('every interned owner name owns an RRset');
  }
  return sorted;
}

/** The per-RRset columns of the shard, row i for the i-th RRset in shard order. */
export interface RrsetColumns {
  rrtype: Uint16Array;
  /** Rank of the bailiwick (NameRanks). */
  bailiwick: Uint32Array;
  count: Float64Array;
  timeFirst: Uint32Array;
  timeLast: Uint32Array;
  zoneTimeFirst: Uint32Array;
  zoneTimeLast: Uint32Array;
}

/** The shard header's sums over all RRsets. */
export interface ShardTotals {
  observationCount: number;
  /** Earliest and latest sighting, sensor or zone; 0 when there is none. */
  timeMin: number;
  timeMax: number;
}

/** Earliest sighting of RRset row i, sensor or zone (0 for none). */
export function firstSeen(c: RrsetColumns, i: number): number {
  return minNonZero(c.timeFirst[i]!, c.zoneTimeFirst[i]!);
}

/** Latest sighting of RRset row i, sensor or zone. */
export function lastSeen(c: RrsetColumns, i: number): number {
  return Math.max(c.timeLast[i]!, c.zoneTimeLast[i]!);
}

/**
 * Copies the table's RRset columns into shard order, bailiwicks as ranks,
 * and sums the header's totals on the way (one pass over the RRsets).
 */
export function rrsetColumns(table: RrsetTable, order: Uint32Array,
  bailiwickRank: Uint32Array): { columns: RrsetColumns; totals: ShardTotals } {
  const n = order.length;
  const tType = table.rrtype.view(), tBail = table.bailiwick.view();
  const rrtype = new Uint16Array(n), bailiwick = new Uint32Array(n), count = new Float64Array(n);
  const tf = new Uint32Array(n), tl = new Uint32Array(n), ztf = new Uint32Array(n), ztl = new Uint32Array(n);
  let observationCount = 0, timeMin = 0, timeMax = 0;
  for (let i = 0; i < n; i++) {
    const r = order[i]!;
    rrtype[i] = tType[r]!;
    bailiwick[i] = bailiwickRank[tBail[r]!]!;
    count[i] = table.count.get(r);
    tf[i] = table.timeFirst.get(r); tl[i] = table.timeLast.get(r);
    ztf[i] = table.zoneTimeFirst.get(r); ztl[i] = table.zoneTimeLast.get(r);
    observationCount += count[i]!;
    timeMin = minNonZero(timeMin, minNonZero(tf[i]!, ztf[i]!));
    timeMax = Math.max(timeMax, tl[i]!, ztl[i]!);
  }
  return {
    columns: { rrtype, bailiwick, count, timeFirst: tf, timeLast: tl, zoneTimeFirst: ztf, zoneTimeLast: ztl },
    totals: { observationCount, timeMin, timeMax },
  };
}
