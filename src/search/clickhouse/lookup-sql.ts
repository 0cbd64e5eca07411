// Standard search as one ClickHouse SELECT whose rows come in the order the
// local backend's merge produces (search/local/lookup-sources.ts keyOf):
//   rrset rows: the owner as its index keys it (reversed, or forward for the
//     right-hand wildcards `www.example.*` and `.+`), rrtype, bailiwick,
//     then the rdata texts in wire order (shard/rrset-order.ts; ClickHouse
//     compares tuples and arrays of them the same way);
//   rdata rows: the index key (the address, or the target name reversed or
//     forward as for owners), rrtype, text, reversed owner.
// Every row is aggregated over all data (GROUP BY and -Merge), so the
// answer is that of the local tier with aggr, or of its shards compacted
// into one, and the time fence, judged on those sums, can be applied before
// LIMIT (search/lookup-search.ts judges it again, with the same result).
//
// The one-label wildcards (`+.example.com`, `www.example.+`) select a prefix
// range here and keep only one-label names in the source (dns/name.ts
// isOneLabel, the rule the shards use), so their queries have no LIMIT.
//
// Rows are JSONEachRow: rdata texts may hold any printable character, and a
// row beginning `{` is never mistaken for a mid-stream "Code: " error.

import assert from 'node:assert/strict';
import { firstTimeSql, RDATA_KIND, type Tables } from '../../clickhouse/schema.js';
import { sqlString, sqlUInt } from '../../clickhouse/literal.js';
import { reverseName } from '../../dns/name.js';
import type { NameMatch } from '../../model/name-match.js';
import type { LookupQuery } from '../../query/lookup-query.js';
import { fenceSql, typeFilterSql } from './flex-sql.js';

/** What the source needs to know about a query's rows. */
export interface LookupShape {
  sql: string;
  /** rrset rows (an rdata array and a bailiwick) or rdata rows (one text). */
  target: 'rrset' | 'rdata';
  /** Keep only rows whose name (the owner, or the rdata's target), after `prefix`, is exactly one more label. */
  oneLabel?: { field: 'owner' | 'target'; prefix: string; reversed: boolean };
}

/** Above every byte a presentation name holds: `col >= p AND col < p + END` is the prefix range of p. */
const PAST_PRINTABLE = '\x7f';

function prefixRange(column: string, prefix: string): string {
  return `${column} >= ${sqlString(prefix)} AND ${column} < ${sqlString(prefix + PAST_PRINTABLE)}`;
}

/** Conditions on the reversed and forward name columns for a NameMatch, and which one orders the rows. */
interface NameCondition {
  where: string;
  order: string;
  oneLabel?: LookupShape['oneLabel'];
}

function nameCondition(m: NameMatch, reversed: string, forward: string): NameCondition {
  switch (m.mode) {
    case 'exact': return { where: `${reversed} = ${sqlString(reverseName(m.name))}`, order: reversed };
    case 'under': case 'one-under': {
      const p = m.name === '.' ? '' : reverseName(m.name);
      return {
        where: prefixRange(reversed, p), order: reversed,
        ...(m.mode === 'one-under' ? { oneLabel: { field: 'owner', prefix: p, reversed: true } } : {}),
      };
    }
    case 'starts': case 'one-more':
      return {
        where: prefixRange(forward, m.prefix), order: forward,
        ...(m.mode === 'one-more' ? { oneLabel: { field: 'owner', prefix: m.prefix, reversed: false } } : {}),
      };
  }
}

// Aliases differ from the column names: an alias equal to the column it aggregates is a cycle to ClickHouse.
const SIGHTINGS = `sumMerge(count) AS c, ${firstTimeSql('minMerge(time_first)')} AS tf, maxMerge(time_last) AS tl, ` +
  `${firstTimeSql('minMerge(zone_time_first)')} AS ztf, maxMerge(zone_time_last) AS ztl`;

/** model/sighting.ts firstSeen (minNonZero) and lastSeen over the merged columns, for HAVING. */
const FIRST_SEEN = 'if(tf = 0, ztf, if(ztf = 0, tf, least(tf, ztf)))';
const LAST_SEEN = 'greatest(tl, ztl)';

/** An IPv4 address as rdata_index keys it: mapped into IPv6 (ingest/clickhouse-ingest.ts ipKey). */
function ipKeyOf(family: 4 | 6, bytes: Uint8Array): Uint8Array {
  if (family === 6) return bytes;
  const key = new Uint8Array(16);
  key[10] = 0xff;
  key[11] = 0xff;
  key.set(bytes, 12);
  return key;
}

/**
 * lookup/rdata/raw: the records whose wire form is `wire`, found in the RRsets
 * themselves (ARRAY JOIN pairs each record's text with its wire form). Not
 * through an index: rdata_index holds names and addresses only, and this is
 * the rarest lookup; it reads the whole rrsets table.
 */
function rawRdataShape(wire: Uint8Array, want: number, rrsets: string, types: string | undefined,
  having: string, aggr: boolean): LookupShape {
  const where = [`w = ${sqlString(wire)}`, ...(types !== undefined ? [types] : [])];
  // The shards key these rows by the wire form in hex (shard-reader.ts rdataByWire).
  const ik = sqlString(Buffer.from(wire).toString('hex'));
  // Joined columns under their own names, in a subquery: 18.16 compares a joined key column with the
  // sort key's array type and refuses the statement (Code 169).
  const records = `SELECT rrname, rrname_rev, rrtype, text, bailiwick, rdata_wire AS set_wire, rdata AS set_texts, count, ` +
    `time_first, time_last, zone_time_first, zone_time_last FROM ${rrsets} ARRAY JOIN rdata AS text, rdata_wire AS w ` +
    `WHERE ${where.join(' AND ')}`;
  const sql = `SELECT any(rrname) AS owner, rrname_rev AS owner_rev, rrtype, text AS rdata, ${ik} AS ik, ${SIGHTINGS} ` +
    `${aggr ? '' : ', bailiwick, any(set_texts) AS texts '}FROM (${records}) ` +
    `GROUP BY rrname_rev, rrtype, text${aggr ? '' : ', bailiwick, set_wire'}${having} ` +
    `ORDER BY rrtype, rdata, owner_rev${aggr ? '' : ', bailiwick, texts'} LIMIT ${sqlUInt(want)} FORMAT JSONEachRow`;
  return { sql, target: 'rdata' };
}

/** The SELECT of a standard search. */
export function lookupShape(q: LookupQuery, want: number, tables: Tables): LookupShape {
  const types = typeFilterSql(q.typeFilter);
  const fence = fenceSql(q.fence, FIRST_SEEN, LAST_SEEN);
  const having = fence !== undefined ? ` HAVING ${fence}` : '';
  const where: string[] = [];
  let order: string;
  let shape: Omit<LookupShape, 'sql'>;
  let select: string;
  let from: string;
  let group: string;
  if (q.target === 'rrset') {
    // query/lookup-query.ts reads rrset/raw values as names.
    assert.ok(q.value.kind === 'name', 'an rrset lookup is by name');
    const c = nameCondition(q.value.match, 'rrname_rev', 'rrname');
    where.push(c.where);
    if (q.bailiwick !== undefined) where.push(`bailiwick = ${sqlString(q.bailiwick)}`);
    order = `${c.order === 'rrname' ? 'owner' : c.order}, rrtype, bailiwick, texts`;
    shape = { target: 'rrset', ...(c.oneLabel ? { oneLabel: c.oneLabel } : {}) };
    select = `any(rrname) AS owner, ${c.order === 'rrname' ? 'owner' : 'rrname_rev'} AS ik, rrtype, bailiwick, ` +
      `any(rdata) AS texts, ${SIGHTINGS}`;
    from = tables.rrsets;
    group = 'rrname_rev, rrtype, bailiwick, rdata_wire';
  } else {
    let indexKey: string;
    const v = q.value;
    if (v.kind === 'raw') return rawRdataShape(v.wire, want, tables.rrsets, types, having, q.aggr);
    if (v.kind === 'ip') {
      where.push(`kind = ${RDATA_KIND.IP}`,
        `rdata_key >= ${sqlString(ipKeyOf(v.family, v.low))} AND rdata_key <= ${sqlString(ipKeyOf(v.family, v.high))}`);
      order = 'rdata_key, rrtype, rdata, owner_rev';
      // The shards key an IPv4 address by its 4 bytes in hex, an IPv6 one by its 16 (shard-reader.ts rdataByAddress).
      indexKey = v.family === 4 ? 'lower(hex(substring(rdata_key, 13, 4)))' : 'lower(hex(rdata_key))';
      shape = { target: 'rdata' };
    } else {
      const c = nameCondition(v.match, 'rdata_key', 'rdata_name');
      where.push(`kind = ${RDATA_KIND.NAME}`, c.where);
      order = `${c.order === 'rdata_key' ? 'rdata_key' : 'target'}, rrtype, rdata, owner_rev`;
      indexKey = c.order === 'rdata_key' ? 'rdata_key' : 'target';
      shape = { target: 'rdata', ...(c.oneLabel ? { oneLabel: { ...c.oneLabel, field: 'target' as const } } : {}) };
    }
    select = `any(rrname) AS owner, any(rrname_rev) AS owner_rev, rrtype, rdata, any(rdata_name) AS target, ${indexKey} AS ik, ` +
      SIGHTINGS;
    from = tables.rdata_index;
    group = 'rdata_key, rrtype, rdata, rrname_rev';
    if (!q.aggr) {
      // Each RRset holding the record alone, in a shard's order of RRsets: bailiwick, then record set.
      select += ', bailiwick, any(rrset_rdata) AS texts';
      group += ', bailiwick, rrset_id';
      order += ', bailiwick, texts';
    }
    // Grouped by rrname_rev, so any(rrname_rev) is it; ordering by the alias keeps the ORDER BY on the SELECT list.
  }
  if (types !== undefined) where.push(types);
  const limit = shape.oneLabel === undefined ? ` LIMIT ${sqlUInt(want)}` : '';
  const sql = `SELECT ${select} FROM ${from} WHERE ${where.join(' AND ')} GROUP BY ${group}${having} ` +
    `ORDER BY ${order}${limit} FORMAT JSONEachRow`;
  return { sql, ...shape };
}

