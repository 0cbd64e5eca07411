// LookupLineBytes (render/lookup-line-bytes.ts) writes a lookup's result
// lines as bytes from a shard's records: each must be exactly the text
// lookupLine makes of the same result, whatever the names, records, times
// and counts hold (reverseNameBytes itself: test/unit/shard/interned-blob.test.ts).

import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { reverseName } from '../../../src/dns/name.js';
import type { Sighting } from '../../../src/model/sighting.js';
import { LookupLineBytes } from '../../../src/render/lookup-line-bytes.js';
import { lookupLine, type LookupResult } from '../../../src/render/result-lines.js';

const RUNS = Number(process.env['RRSCAN_FUZZ_RUNS'] ?? 500);

/** Presentation text: printable ASCII, weighted towards what makes escaping and label walks hard. */
const text = fc.array(fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('a', 'b', '-', '0', '.') },
  { weight: 2, arbitrary: fc.constantFrom('\\', '"', '\\.', '\\\\', '\\032', ' ') },
  { weight: 1, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
), { maxLength: 40 }).map((parts) => parts.join(''));

const name = fc.oneof(text, text.map((t) => `${t}.`), fc.constant('.'), fc.constant(''));

const time = fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 0xffffffff }));
const sighting = fc.record<Sighting>({
  count: fc.oneof(fc.integer({ min: 0, max: 2 ** 32 }), fc.constant(Number.MAX_SAFE_INTEGER), fc.constant(2 ** 60)),
  timeFirst: time, timeLast: time, zoneTimeFirst: time, zoneTimeLast: time,
});

/** Bytes of `s` inside other bytes, as a shard's record sits in its blob. */
function inBlob(s: string): [Uint8Array, number, number] {
  return [Buffer.from(`\n~${s}\n~`, 'latin1'), 2, 2 + s.length];
}

/** Writes r's line into w, as a lookup source does. */
function writeLine(w: LookupLineBytes, r: LookupResult, humantime: boolean): void {
  w.begin(r.sighting, humantime);
  w.owner(...inBlob(reverseName(r.rrname)));
  w.rrtype(r.rrtype);
  if (typeof r.rdata === 'string') {
    w.rdata(...inBlob(r.rdata));
  } else {
    if (r.bailiwick !== undefined && r.bailiwick !== '') w.bailiwick(...inBlob(r.bailiwick));
    for (const t of r.rdata) w.record(...inBlob(t));
    w.endRecords();
  }
}

function viaBytes(r: LookupResult, humantime: boolean, w = new LookupLineBytes()): string {
  writeLine(w, r, humantime);
  return Buffer.from(w.take()).toString('latin1');
}

describe('LookupLineBytes', () => {
  const seen: Sighting = { count: 3, timeFirst: 1_600_000_000, timeLast: 1_600_000_100, zoneTimeFirst: 0, zoneTimeLast: 0 };
  const rrset: LookupResult = {
    rrname: 'www.example.com.', rrtype: 1, bailiwick: 'example.com.', rdata: ['192.0.2.1', '192.0.2.2'], sighting: seen,
  };

  it('writes lookupLine\'s text and a newline, for RRsets and single records', () => {
    expect(viaBytes(rrset, false)).toBe('{"obj":{"count":3,"time_first":1600000000,"time_last":1600000100,' +
      '"rrname":"www.example.com.","rrtype":"A","bailiwick":"example.com.","rdata":["192.0.2.1","192.0.2.2"]}}\n');
    expect(viaBytes({ ...rrset, bailiwick: undefined, rdata: '192.0.2.1' }, true)).toBe(`${lookupLine(
      { ...rrset, bailiwick: undefined, rdata: '192.0.2.1' }, true)}\n`);
    expect(viaBytes({ ...rrset, bailiwick: '', rdata: [], rrtype: 65280 }, false)).toBe('{"obj":{"count":3,' +
      '"time_first":1600000000,"time_last":1600000100,"rrname":"www.example.com.","rrtype":"TYPE65280","rdata":[]}}\n');
  });

  it('equals lookupLine on any result, lines one after another in one buffer', () => {
    const result = fc.record<LookupResult>({
      rrname: name,
      rrtype: fc.constantFrom(1, 2, 5, 16, 28, 65280),
      bailiwick: fc.oneof(fc.constant(undefined), fc.constant(''), name),
      rdata: fc.oneof(text, fc.array(text, { maxLength: 5 })),
      sighting,
    }).map((r) => (typeof r.rdata === 'string' ? { ...r, bailiwick: undefined } : r));
    fc.assert(fc.property(fc.array(result, { minLength: 1, maxLength: 8 }), fc.boolean(), (results, humantime) => {
      const w = new LookupLineBytes();
      const expected = results.map((r) => `${lookupLine({ ...r, rrname: reverseName(reverseName(r.rrname)) }, humantime)}\n`);
      let got = '';
      for (const r of results) got += viaBytes(r, humantime, w);
      expect(got).toBe(expected.join(''));
    }), { numRuns: RUNS });
  });

  it('cuts a record whose offsets run past its bytes (a damaged shard) to those bytes', () => {
    const w = new LookupLineBytes();
    const src = Buffer.from('com.example.', 'latin1');
    w.begin({ count: 1, timeFirst: 0, timeLast: 0, zoneTimeFirst: 0, zoneTimeLast: 0 }, false);
    w.owner(src, 4, 4_000_000_000);
    w.rrtype(1);
    w.record(src, 9, 3_000_000_000);
    w.record(src, 2_000_000_000, 2_000_000_001);
    w.endRecords();
    expect(Buffer.from(w.take()).toString('latin1')).toBe('{"obj":{"count":1,"rrname":"example.","rrtype":"A","rdata":["le.",""]}}\n');
  });

  it('grows past its first buffer without losing what it holds', () => {
    const long = 'x'.repeat(30_000);
    const big: LookupResult = { ...rrset, bailiwick: '', rdata: [long, `"${long}"`, long] };
    const w = new LookupLineBytes();
    for (let i = 0; i < 3; i++) writeLine(w, big, false);
    const got = Buffer.from(w.take()).toString('latin1');
    // Compared as a whole, not printed: a failure would print 270 KB.
    expect(got === `${lookupLine(big, false)}\n`.repeat(3)).toBe(true);
    // Past 1 MiB the grown buffer is let go at take(); what was taken stays intact.
    for (let i = 0; i < 12; i++) writeLine(w, big, false);
    const taken = w.take();
    w.line('{"x":1}');
    expect(Buffer.from(taken).toString('latin1') === `${lookupLine(big, false)}\n`.repeat(12)).toBe(true);
    expect(Buffer.from(w.take()).toString('latin1')).toBe('{"x":1}\n');
  });
});
