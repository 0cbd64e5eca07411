// The trigram conditions of a flexible search on a server with the ngram
// index (src/search/clickhouse/flex-sql.ts trigramSql): what SQL they are.
// That they never change an answer is the differential test's job, on
// ClickHouse 26.7 (test/integration/clickhouse-differential.test.ts).

import { describe, expect, it } from 'vitest';
import type { Tables } from '../../../src/clickhouse/schema.js';
import { compilePattern } from '../../../src/query/pattern.js';
import { parseFlexQuery } from '../../../src/query/flex-query.js';
import { flexSql, trigramSql } from '../../../src/search/clickhouse/flex-sql.js';

const conditions = (pattern: string) => trigramSql(compilePattern('regex', pattern).trigrams, 'lower(rrname)');
const like = (literal: string) => `lower(rrname) LIKE '${literal}'`;

describe('trigramSql', () => {
  it('ANDs the lower-cased trigrams every match holds, as LIKE on the indexed expression', () => {
    expect(conditions('PayPal')).toBe(`(${[like('%ayp%'), like('%pal%'), like('%pay%'), like('%ypa%')].join(' AND ')})`);
  });

  it("ORs the branches of an alternation, and escapes LIKE's _ % and \\ (written by the one literal function)", () => {
    expect(conditions('abc|xyz')).toBe(`(${like('%abc%')} OR ${like('%xyz%')})`);
    // \x5C is the backslash: LIKE reads \_ \% \\ as the characters themselves.
    expect(conditions('a_b%')).toBe(`(${like('%\\x5C_b\\x5C%%')} AND ${like('%a\\x5C_b%')})`);
    expect(conditions('x\\\\yz')).toBe(`(${like('%\\x5C\\x5Cyz%')} AND ${like('%x\\x5C\\x5Cy%')})`);
  });

  it('adds nothing for a pattern without a trigram, and 0 for one no printable value can match', () => {
    expect(conditions('.')).toBeUndefined();
    expect(conditions('[a-z]+\\.com')).toBe(`(${like('%.co%')} AND ${like('%com%')})`);
    expect(conditions('ab')).toBeUndefined();
    expect(conditions('abc\\n')).toBe('0');
  });
});

describe('flexSql', () => {
  const tables = { flex_names: 'db.flex_names', flex_rdata: 'db.flex_rdata' } as Tables;
  const q = parseFlexQuery(['regex', 'rrnames', 'paypal'], new Map(), 1_700_000_000);

  it('puts the trigram conditions before match() only where the tables have the ngram index', () => {
    const plain = flexSql(q, q.fence, 11, { ...tables, ngramIndex: false });
    const indexed = flexSql(q, q.fence, 11, { ...tables, ngramIndex: true });
    expect(plain).not.toContain('LIKE');
    expect(indexed).toBe(plain.replace('WHERE match(', `WHERE ${conditions('paypal')!} AND match(`));
  });

  it('never for an exclude pattern (a necessary condition of a match says nothing of a non-match)', () => {
    const x = parseFlexQuery(['regex', 'rrnames', 'paypal'], new Map([['exclude', 'login']]), 1_700_000_000);
    const sql = flexSql(x, x.fence, 11, { ...tables, ngramIndex: true });
    expect(sql).toContain('NOT match(');
    expect(sql).not.toContain("'%log%'");
  });
});
