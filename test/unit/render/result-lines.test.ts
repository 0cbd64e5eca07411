// The result lines of both searches (render/result-lines.ts), written as JSON
// text by hand for speed: each must be the exact bytes compat.md "Result
// objects" gives (key order, which time keys appear, humantime), and must
// parse as the JSON it claims to be whatever the names hold.

import { describe, expect, it } from 'vitest';
import { jsonString } from '../../../src/render/json-text.js';
import {
  flexNameLine, flexRdataLine, lookupLine, summaryLine, watchNameLine, watchRdataLine, type LookupResult,
} from '../../../src/render/result-lines.js';
import type { Sighting } from '../../../src/model/sighting.js';

const seen: Sighting = { count: 3, timeFirst: 1_600_000_000, timeLast: 1_600_000_100, zoneTimeFirst: 0, zoneTimeLast: 0 };

describe('flexible and watch lines', () => {
  it('are one JSON object each, ending in a newline, with the rrtype as its mnemonic', () => {
    expect(flexNameLine(jsonString('www.example.com.'), 1)).toBe('{"obj":{"rrname":"www.example.com.","rrtype":"A"}}\n');
    expect(flexRdataLine(jsonString('192.0.2.1'), 1, 'C0000201'))
      .toBe('{"obj":{"rdata":"192.0.2.1","rrtype":"A","raw_rdata":"C0000201"}}\n');
    expect(watchNameLine(jsonString('a.example.'), 28, 1_600_000_000))
      .toBe('{"obj":{"rrname":"a.example.","rrtype":"AAAA","time_first":1600000000}}\n');
    expect(watchRdataLine(jsonString('ns1.example.'), 2, '036E7331076578616D706C6500', 1_600_000_000))
      .toBe('{"obj":{"rdata":"ns1.example.","rrtype":"NS","raw_rdata":"036E7331076578616D706C6500","time_first":1600000000}}\n');
  });

  it('name a type without a mnemonic TYPEnnn (RFC 3597)', () => {
    expect(flexNameLine(jsonString('x.example.'), 65280)).toBe('{"obj":{"rrname":"x.example.","rrtype":"TYPE65280"}}\n');
  });
});

describe('lookupLine', () => {
  const rrset: LookupResult = {
    rrname: 'www.example.com.', rrtype: 1, bailiwick: 'example.com.', rdata: ['192.0.2.1', '192.0.2.2'], sighting: seen,
  };

  it('an RRset: count, the times it has, rrname, rrtype, bailiwick, rdata as an array', () => {
    expect(lookupLine(rrset, false)).toBe('{"obj":{"count":3,"time_first":1600000000,"time_last":1600000100,' +
      '"rrname":"www.example.com.","rrtype":"A","bailiwick":"example.com.","rdata":["192.0.2.1","192.0.2.2"]}}');
  });

  it('leaves out the times never seen (0) and an unknown bailiwick', () => {
    const zoneOnly: Sighting = { count: 1, timeFirst: 0, timeLast: 0, zoneTimeFirst: 1_500_000_000, zoneTimeLast: 1_500_000_500 };
    expect(lookupLine({ ...rrset, bailiwick: '', sighting: zoneOnly }, false)).toBe('{"obj":{"count":1,' +
      '"zone_time_first":1500000000,"zone_time_last":1500000500,"rrname":"www.example.com.","rrtype":"A",' +
      '"rdata":["192.0.2.1","192.0.2.2"]}}');
  });

  it('an rdata lookup: one record as a string and no bailiwick key', () => {
    expect(lookupLine({ ...rrset, bailiwick: undefined, rdata: '192.0.2.1' }, false)).toBe('{"obj":{"count":3,' +
      '"time_first":1600000000,"time_last":1600000100,"rrname":"www.example.com.","rrtype":"A","rdata":"192.0.2.1"}}');
  });

  it('humantime writes RFC 3339 UTC times without fractions', () => {
    const all: Sighting = { count: 1, timeFirst: 1_600_000_000, timeLast: 1_600_000_001, zoneTimeFirst: 0, zoneTimeLast: 1 };
    expect(lookupLine({ ...rrset, sighting: all }, true)).toBe('{"obj":{"count":1,"time_first":"2020-09-13T12:26:40Z",' +
      '"time_last":"2020-09-13T12:26:41Z","zone_time_last":"1970-01-01T00:00:01Z","rrname":"www.example.com.",' +
      '"rrtype":"A","bailiwick":"example.com.","rdata":["192.0.2.1","192.0.2.2"]}}');
  });

  it('is the JSON of what it says, also for names and rdata holding quotes and backslashes', () => {
    const odd: LookupResult = {
      rrname: 'a\\"b.example.', rrtype: 16, bailiwick: 'ex\\\\ample.', rdata: ['"say \\"hi\\""', '"back\\\\slash"'],
      sighting: { ...seen, zoneTimeFirst: 5, zoneTimeLast: 6 },
    };
    expect(JSON.parse(lookupLine(odd, false))).toEqual({ obj: {
      count: 3, time_first: 1_600_000_000, time_last: 1_600_000_100, zone_time_first: 5, zone_time_last: 6,
      rrname: odd.rrname, rrtype: 'TXT', bailiwick: odd.bailiwick, rdata: odd.rdata,
    } });
  });
});

describe('summaryLine', () => {
  it('count, num_results, then the times', () => {
    expect(summaryLine(seen, 2, false)).toBe('{"obj":{"count":3,"num_results":2,"time_first":1600000000,"time_last":1600000100}}');
    expect(summaryLine({ ...seen, timeFirst: 0, timeLast: 0 }, 0, true)).toBe('{"obj":{"count":3,"num_results":0}}');
  });
});
