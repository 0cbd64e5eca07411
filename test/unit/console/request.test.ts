// The console's pure parts: from form values to API paths (spec 4.1-4.4),
// the pivot a flexible result leads to, and the cell text and exports.
// The browser test (integration/console-browser.test.ts) runs them in
// chromium against the server; these pin the edges a browser run would not
// reach quickly.

import { describe, expect, it } from 'vitest';
import { encode, fenceValue, flexPath, lookupPath, pivotOf, watchPath } from '../../../console/src/request.js';
import { cellText, toCsv, toNdjson } from '../../../console/src/table.js';

const flex = { method: 'regex', what: 'rrnames', pattern: '', rrtype: '', exclude: '', limit: '', fences: {} };
const lookup = { kind: 'rrset/name', value: '', rrtype: '', bailiwick: '', limit: '' };

describe('request paths', () => {
  it('percent-encodes every character spec 4.4 lists, ! included', () => {
    expect(encode('!"/?%[\\]*.a b+')).toBe('%21%22%2F%3F%25%5B%5C%5D*.a%20b%2B');
  });

  it('builds a flexible search with its rrtype, exclude, limit and time fences', () => {
    expect(flexPath({ ...flex, pattern: 'pay(pal|/x)', rrtype: ' A ', exclude: '^x\\.', limit: '5',
      fences: { time_first_after: '-86400', time_last_before: '2024-01-02', time_first_before: '2024-01-02T03:04' } }))
      .toBe('regex/rrnames/pay(pal%7C%2Fx)/A?exclude=%5Ex%5C.&limit=5&time_first_after=-86400&time_first_before=1704164640' +
        '&time_last_before=1704153600');
    expect(flexPath({ ...flex, method: 'glob', what: 'rdata', pattern: '*.example.' })).toBe('glob/rdata/*.example.');
  });

  it('builds a watch with its rrtype, exclude, limit and the time_first it resumes from', () => {
    const watch = { method: 'regex', what: 'rrnames', pattern: '', rrtype: '', exclude: '', limit: '', since: '' };
    expect(watchPath({ ...watch, pattern: 'pay(pal|/x)', rrtype: 'A', exclude: 'x', limit: '5', since: '1795718884' }))
      .toBe('watch/regex/rrnames/pay(pal%7C%2Fx)/A?exclude=x&limit=5&time_first_after=1795718884');
    expect(watchPath({ ...watch, method: 'glob', what: 'rdata', pattern: '*.example.', since: '2024-01-02' }))
      .toBe('watch/glob/rdata/*.example.?time_first_after=1704153600');
    expect(() => watchPath(watch)).toThrow(/^Regex or glob: /);
    expect(() => watchPath({ ...watch, pattern: 'x', since: 'then' })).toThrow(/^Resume from: /);
  });

  it('refuses an empty pattern or value and a time it cannot read, saying which field', () => {
    expect(() => flexPath(flex)).toThrow(/^Pattern: /);
    expect(() => lookupPath(lookup)).toThrow(/^Value: /);
    expect(() => fenceValue('time_last_after', 'yesterday')).toThrow(/^time_last_after: give epoch seconds/);
    expect(() => fenceValue('time_last_after', '2024-13-45')).toThrow(/^time_last_after: /);
    expect(fenceValue('time_last_after', ' ')).toBeUndefined();
  });

  it('builds lookups; a bailiwick goes after the rrtype (ANY when none) and only on RRset lookups', () => {
    expect(lookupPath({ ...lookup, value: '*.example.com', limit: '10' })).toBe('lookup/rrset/name/*.example.com?limit=10');
    expect(lookupPath({ ...lookup, value: 'www.example.com', bailiwick: 'example.com' }))
      .toBe('lookup/rrset/name/www.example.com/ANY/example.com');
    expect(lookupPath({ ...lookup, kind: 'rdata/ip', value: '198.51.100.0,24', bailiwick: 'ignored.' }))
      .toBe('lookup/rdata/ip/198.51.100.0%2C24');
    expect(lookupPath({ ...lookup, kind: 'rdata/name', value: 'ns1.example.', rrtype: 'NS' })).toBe('lookup/rdata/name/ns1.example./NS');
  });

  it('pivots an rrnames result to its RRset lookup and an rdata result to its raw rdata lookup', () => {
    expect(pivotOf({ rrname: 'www.example.', rrtype: 'A' })).toEqual({ ...lookup, value: 'www.example.', rrtype: 'A' });
    expect(pivotOf({ rdata: 'ns1.example.', rrtype: 'NS', raw_rdata: '036E7331076578616D706C6500' }))
      .toEqual({ ...lookup, kind: 'rdata/raw', value: '036E7331076578616D706C6500', rrtype: 'NS' });
    expect(pivotOf({ count: 1 })).toBeUndefined();
  });
});

describe('cells and exports', () => {
  const row = { rrname: 'x.example.', rrtype: 'TXT', rdata: ['"a,b"', '=1+1'], zone_time_first: 0, zone_time_last: 86400, count: 2 };

  it('shows one rdata value a line, times in UTC, and zone times marked as such', () => {
    expect(cellText(row, 'rdata')).toBe('"a,b"\n=1+1');
    expect(cellText(row, 'time_last')).toBe('1970-01-02T00:00:00Z (zone)');
    expect(cellText({ time_first: 1_600_000_000 }, 'time_first')).toBe('2020-09-13T12:26:40Z');
    expect(cellText(row, 'bailiwick')).toBe('');
  });

  it('writes RFC 4180 CSV with formula-looking cells defused, and NDJSON of the objects as received', () => {
    expect(toCsv('rrnames', [{ rrname: '=cmd|x.example.', rrtype: 'A' }, { rrname: '-1,"x"', rrtype: 'A' }]))
      .toBe('rrname,rrtype\r\n\'=cmd|x.example.,A\r\n"\'-1,""x""",A\r\n');
    expect(toCsv('lookup', [row]).split('\r\n')[1]).toBe('x.example.,TXT,"""a,b""\n=1+1",,2,1970-01-01T00:00:00Z (zone),1970-01-02T00:00:00Z (zone)');
    expect(toNdjson([row, { rrname: 'y.' }])).toBe(`${JSON.stringify(row)}\n{"rrname":"y."}\n`);
  });
});
