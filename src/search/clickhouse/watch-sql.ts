// The SELECTs of standing watches on the ClickHouse tier
// (clickhouse-watch-feed.ts). Both read the flex tables with every tuple's
// times aggregated over all data (minMerge/maxMerge, as flexible search's
// fences do: flex-sql.ts), one row per (value, rrtype):
//   rrtype, first, last, [hex(rdata_wire),] value
// the value last, so that a row never begins with the "Code: " of a
// mid-stream error (client.ts).
//
// The poll: every tuple first seen at or after `since`, for every watch of
// the process at once (the feed matches them in Node). ClickHouse cannot
// tell which tuples are new since the last poll (the aggregate states carry
// no ingest time), so the poll reads every tuple of the window and the feed
// remembers those it has seen.
//
// Both first pick the keys that have a row first seen at or after `since`
// (finalizeAggregation of each stored row's state: one pass over one
// column, no grouping), and aggregate only those: a tuple first seen then
// or later has every row so, so none is missed, and the HAVING judges the
// aggregate. At 1,000,000 names on 18.16 a poll took 12 ms so, 290 ms
// grouping every row. Through Distributed tables the keys of a tuple live on
// one shard but a subquery over the Distributed table is refused (ClickHouse
// denies IN over two distributed reads), so there the poll groups every row.
//
// The catch-up: one watch's tuples first seen at or after its `since`, its
// pattern, exclude, rrtype filter and the key's fence applied here, the
// earliest `keep` + 1 by time_first (then value, then rrtype: the order a
// watch sends them in), the +1 telling whether there were more.

import { sqlUInt } from '../../clickhouse/literal.js';
import { DISTRIBUTED_SUFFIX, firstTimeSql, type Tables } from '../../clickhouse/schema.js';
import type { TimeFence } from '../../model/filters.js';
import type { FlexTarget } from '../../query/flex-query.js';
import type { WatchQuery } from '../../query/watch-query.js';
import { fenceSql, matchSql, typeFilterSql } from './flex-sql.js';

const FIRST = firstTimeSql('minMerge(first)');
const LAST = 'maxMerge(last)';

function tuplesSql(target: FlexTarget, tables: Tables, since: number, where: string[], having: string[]): string {
  const names = target === 'rrnames';
  const value = names ? 'rrname' : 'rdata';
  const table = names ? tables.flex_names : tables.flex_rdata;
  if (!tables.distributed) {
    where.push(`(${value}, rrtype) IN (SELECT ${value}, rrtype FROM ${table} WHERE finalizeAggregation(first) >= ${sqlUInt(since)})`);
  } else if (!table.endsWith(DISTRIBUTED_SUFFIX)) {
    throw new Error(`${table}: a Distributed table without its suffix`);
  }
  const filter = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  return `SELECT rrtype, ${FIRST} AS f, ${LAST} AS l${names ? '' : ', hex(any(rdata_wire))'}, ${value} FROM ${table}${filter} ` +
    `GROUP BY ${value}, rrtype HAVING ${having.join(' AND ')}`;
}

/** Every tuple of `target` first seen at or after `since`. */
export function watchPollSql(target: FlexTarget, since: number, tables: Tables): string {
  return `${tuplesSql(target, tables, since, [], [`${FIRST} >= ${sqlUInt(since)}`])} FORMAT TabSeparated`;
}

/** A watch's catch-up: its earliest `keep` + 1 tuples first seen at or after q.since; `q`'s patterns must compile. */
export function watchCatchUpSql(q: WatchQuery, fence: TimeFence, keep: number, tables: Tables): string {
  const value = q.target === 'rrnames' ? 'rrname' : 'rdata';
  const where: string[] = [];
  const main = matchSql(q.method, q.pattern, value, tables.ngramIndex);
  if (main !== undefined) where.push(main);
  if (q.exclude !== undefined) where.push(`NOT ${matchSql(q.method, q.exclude, value) ?? '1'}`);
  const types = typeFilterSql(q.typeFilter);
  if (types !== undefined) where.push(types);
  const having = [`${FIRST} >= ${sqlUInt(q.since)}`];
  const fenced = fenceSql(fence, FIRST, LAST);
  if (fenced !== undefined) having.push(fenced);
  return `SELECT * FROM (${tuplesSql(q.target, tables, q.since, where, having)}) ORDER BY f, ${value}, rrtype LIMIT ${sqlUInt(keep + 1)} ` +
    'FORMAT TabSeparated';
}
