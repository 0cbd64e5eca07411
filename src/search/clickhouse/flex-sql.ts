// Flexible search as one ClickHouse SELECT: the same answer the local scan
// gives (search/local/flex-scan.ts), value by value.
//
// - The pattern is the one the local scan runs, compiled by query/pattern.ts:
//   its blob form has case folding spelled out as byte classes and no flags,
//   so ClickHouse's match() (RE2, whatever its version) needs no `(?i)` and
//   folds exactly as our RE2 does. On one record the blob form matches
//   exactly when the record form does (pattern.ts says why).
// - Entries are (value, rrtype) with their times aggregated over all data,
//   as the local scan widens them over every shard (tuple-times.ts); the
//   rrtype filter and fence judge each entry, and a value with no entry left
//   is no result.
// - Values ascend by bytes, as shard blobs do (records are printable ASCII,
//   so that is also JavaScript's string order), and the query returns at
//   most `want` of them: offset + limit + 1, the +1 telling `limited` from
//   `succeeded`, as locally.
//
// - Where the flex tables have the ngram skip index (schema.ts NGRAM_INDEX,
//   tables.ngramIndex), the pattern's trigram query (query/regex-trigrams.ts:
//   trigrams every matching record holds, lower-cased) is added as LIKE
//   conditions on the indexed expression, so the server reads only granules
//   that may match. They are necessary conditions of match(), so the answer
//   is the same with or without them.
//
// Each row is one value: its rrtypes (and for rdata their wire forms in hex,
// in the same order), then the value; arrays first, so a row never begins
// with the "Code: " of a mid-stream error.

import { firstTimeSql, ngramIndexed, type Tables } from '../../clickhouse/schema.js';
import { sqlString, sqlUInt, sqlUIntList } from '../../clickhouse/literal.js';
import { isDnssecType, RRTYPE_MAX } from '../../dns/rrtype.js';
import type { TimeFence, TypeFilter } from '../../model/filters.js';
import { trigramText, type TrigramQuery } from '../../model/trigram-query.js';
import type { FlexQuery } from '../../query/flex-query.js';
import { compilePattern } from '../../query/pattern.js';

let dnssecTypes: number[] | undefined;

/** The DNSSEC rrtype codes (dns/rrtype.ts), for ANY and ANY-DNSSEC as SQL. */
function dnssecCodes(): number[] {
  if (dnssecTypes === undefined) {
    dnssecTypes = [];
    for (let code = 0; code <= RRTYPE_MAX; code++) if (isDnssecType(code)) dnssecTypes.push(code);
  }
  return dnssecTypes;
}

/** model/filters.ts keepType as a condition on `rrtype`, or undefined when every type is kept. */
export function typeFilterSql(f: TypeFilter): string | undefined {
  if (f === 'all') return undefined;
  if (f === 'any') return `rrtype NOT IN ${sqlUIntList(dnssecCodes())}`;
  if (f === 'any-dnssec') return `rrtype IN ${sqlUIntList(dnssecCodes())}`;
  return `rrtype = ${sqlUInt(f)}`;
}

/** model/filters.ts inFence as a condition on first and last seen, or undefined when there is no fence. */
export function fenceSql(f: TimeFence, first: string, last: string): string | undefined {
  const c: string[] = [];
  if (f.firstBefore !== undefined) c.push(`${first} < ${sqlUInt(f.firstBefore)}`);
  if (f.firstAfter !== undefined) c.push(`${first} > ${sqlUInt(f.firstAfter)}`);
  if (f.lastBefore !== undefined) c.push(`${last} < ${sqlUInt(f.lastBefore)}`);
  if (f.lastAfter !== undefined) c.push(`${last} > ${sqlUInt(f.lastAfter)}`);
  return c.length > 0 ? c.join(' AND ') : undefined;
}

/** A LIKE pattern matching values that contain `text` (LIKE's %, _ and \\ escaped). */
function containsLike(text: string): string {
  return `%${text.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

/** A trigram query as conditions on `lowered` (a lower-cased value), or undefined when it holds for every value. */
export function trigramSql(q: TrigramQuery, lowered: string): string | undefined {
  if (q.op === 'all') return undefined;
  if (q.op === 'none') return '0';
  const parts = [...q.trigrams.map((t) => `${lowered} LIKE ${sqlString(containsLike(trigramText(t)))}`),
    ...q.subs.map((sub) => trigramSql(sub, lowered) ?? '1')];
  return parts.length === 1 ? parts[0] : `(${parts.join(q.op === 'and' ? ' AND ' : ' OR ')})`;
}

/**
 * match() of a flex pattern on `column`, preceded by its trigram conditions
 * when `ngrams` (the column has the ngram index); undefined when the pattern
 * matches every record.
 */
export function matchSql(method: FlexQuery['method'], pattern: string, column: string, ngrams = false): string | undefined {
  const p = compilePattern(method, pattern);
  if (p.everyRecord) return undefined;
  const match = `match(${column}, ${sqlString(p.blobSource)})`;
  const index = ngrams ? trigramSql(p.trigrams, ngramIndexed(column)) : undefined;
  return index !== undefined ? `${index} AND ${match}` : match;
}

/** The SELECT of a flexible search; `q`'s patterns must compile (the plan checked). */
export function flexSql(q: FlexQuery, fence: TimeFence, want: number, tables: Tables): string {
  const names = q.target === 'rrnames';
  const value = names ? 'rrname' : 'rdata';
  const table = names ? tables.flex_names : tables.flex_rdata;
  const where: string[] = [];
  const main = matchSql(q.method, q.pattern, value, tables.ngramIndex);
  if (main !== undefined) where.push(main);
  if (q.exclude !== undefined) where.push(`NOT ${matchSql(q.method, q.exclude, value) ?? '1'}`);
  const types = typeFilterSql(q.typeFilter);
  if (types !== undefined) where.push(types);
  const filter = where.length > 0 ? ` WHERE ${where.join(' AND ')}` : '';
  // Times are judged per entry after aggregating every row of it, as the fence is stated.
  const having = fenceSql(fence, firstTimeSql('minMerge(first)'), 'maxMerge(last)');
  if (names && having === undefined) {
    // No fence, no times to merge: one aggregation by name instead of two. Match-all over 500 k names
    // (bench/clickhouse.ts's database, curl, 3 runs on 2 shared cores): 0.4-0.6 s against 0.6-1.1 s.
    return `SELECT groupUniqArray(rrtype), rrname FROM ${table}${filter} GROUP BY rrname ORDER BY rrname LIMIT ${sqlUInt(want)} ` +
      'FORMAT TabSeparated';
  }
  const wire = names ? '' : ', any(rdata_wire) AS wire';
  const inner = `SELECT ${value}, rrtype${wire} FROM ${table}${filter} ` +
    `GROUP BY ${value}, rrtype${having !== undefined ? ` HAVING ${having}` : ''}`;
  const columns = names ? 'groupArray(rrtype)' : 'groupArray(rrtype), groupArray(hex(wire))';
  return `SELECT ${columns}, ${value} FROM (${inner}) GROUP BY ${value} ORDER BY ${value} LIMIT ${sqlUInt(want)} FORMAT TabSeparated`;
}
