import { describe, expect, it } from 'vitest';
import { parseFlexQuery } from '../../../src/query/flex-query.js';
import { applyKey } from '../../../src/query/params.js';

const q = (s: string) => new Map(new URLSearchParams(s));
const NOW = 1_700_000_000;
const code = (f: () => unknown) => {
  try {
    f();
  } catch (e) {
    return (e as { code: string }).code;
  }
  return 'no error';
};

describe('parseFlexQuery', () => {
  it('parses method, target, pattern, rrtype and parameters', () => {
    const f = parseFlexQuery(['regex', 'rrnames', 'pay.*', 'a'], q('limit=5&offset=2&time_last_after=-60&id=abc:def&swclient=dnsdbq&version=2.6.1-b'), NOW);
    expect(f).toMatchObject({ method: 'regex', target: 'rrnames', pattern: 'pay.*', typeFilter: 1, limit: 5, offset: 2,
      fence: { lastAfter: NOW - 60 }, id: 'abc:def', swclient: 'dnsdbq', version: '2.6.1-b', exclude: undefined });
  });
  it('maps rrtype segments per compat.md', () => {
    expect(parseFlexQuery(['glob', 'rrnames', 'x'], q(''), NOW).typeFilter).toBe('all');
    expect(parseFlexQuery(['glob', 'rrnames', 'x', 'ANY'], q(''), NOW).typeFilter).toBe('any');
    expect(parseFlexQuery(['glob', 'rrnames', 'x', 'any-dnssec'], q(''), NOW).typeFilter).toBe('any-dnssec');
    expect(parseFlexQuery(['glob', 'rrnames', 'x', 'TYPE65534'], q(''), NOW).typeFilter).toBe(65534);
    expect(parseFlexQuery(['glob', 'rdata', 'x', 'mx'], q(''), NOW).typeFilter).toBe(15);
    expect(parseFlexQuery(['glob', 'rdata', 'x', 'ANY'], q(''), NOW).typeFilter).toBe('all');
  });
  it('rejects with the spec\'s codes', () => {
    expect(code(() => parseFlexQuery(['regex'], q(''), NOW))).toBe('BAD_WHAT_TO_SEARCH');
    expect(code(() => parseFlexQuery(['regex', 'names', 'x'], q(''), NOW))).toBe('BAD_WHAT_TO_SEARCH');
    expect(code(() => parseFlexQuery(['regex', 'rrnames'], q(''), NOW))).toBe('MISSING_SEGMENT');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x', 'A', 'more'], q(''), NOW))).toBe('TOO_MANY_SEGMENTS');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x', 'BOGUS'], q(''), NOW))).toBe('BAD_RRTYPE');
    expect(code(() => parseFlexQuery(['regex', 'rdata', 'x', 'A'], q(''), NOW))).toBe('BAD_RRTYPE');
    expect(code(() => parseFlexQuery(['regex', 'rdata', 'x', 'RRSIG'], q(''), NOW))).toBe('BAD_RRTYPE_DNSSEC');
    expect(code(() => parseFlexQuery(['regex', 'rdata', 'x', 'ANY-DNSSEC'], q(''), NOW))).toBe('BAD_RRTYPE_DNSSEC');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('limit=ten'), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('limit=-1'), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('aggr=true'), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('humantime=1'), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('max_count=1'), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('time_first_before=yesterday'), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('id=' + 'a:'.padEnd(31, 'b')), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('id=nocolon'), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('swclient=' + 'c'.repeat(21)), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('version=1/2'), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('exclude=' + 'e'.repeat(4097)), NOW))).toBe('UNPARSABLE_REQUEST');
    expect(code(() => parseFlexQuery(['regex', 'rrnames', 'x'], q('exclude=' + 'e'.repeat(4096)), NOW))).toBe('no error');
  });
});

describe('applyKey', () => {
  const key = { resultsMax: 100, offsetMax: 1000, timeFenceAfter: undefined, timeFenceBefore: undefined };
  it('defaults limit to 10000 clamped to results_max; 0 means results_max', () => {
    const p = parseFlexQuery(['regex', 'rrnames', 'x'], q(''), NOW);
    expect(applyKey(p, key).limit).toBe(100);
    expect(applyKey({ ...p, limit: 0 }, key).limit).toBe(100);
    expect(applyKey({ ...p, limit: 7 }, key).limit).toBe(7);
    expect(applyKey({ ...p, limit: 1_000_000 }, key).limit).toBe(100);
  });
  it('refuses offsets beyond offset_max or where none is allowed (416)', () => {
    const p = parseFlexQuery(['regex', 'rrnames', 'x'], q('offset=1001'), NOW);
    expect(code(() => applyKey(p, key))).toBe('OFFSET_TOO_LARGE');
    expect(code(() => applyKey({ ...p, offset: 1 }, { ...key, offsetMax: undefined }))).toBe('OFFSET_NOT_ALLOWED');
    expect(code(() => applyKey({ ...p, offset: 0 }, { ...key, offsetMax: undefined }))).toBe('no error');
  });
  it('narrows with the key\'s time fence, never widens', () => {
    const p = parseFlexQuery(['regex', 'rrnames', 'x'], q('time_last_after=500&time_first_before=5000'), NOW);
    const f = applyKey(p, { ...key, timeFenceAfter: 1000, timeFenceBefore: 2000 }).fence;
    expect(f).toEqual({ lastAfter: 999, firstBefore: 2001 });
    const g = applyKey(p, { ...key, timeFenceAfter: 100, timeFenceBefore: 9000 }).fence;
    expect(g).toEqual({ lastAfter: 500, firstBefore: 5000 });
  });
});
