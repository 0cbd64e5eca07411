// The trigram index: exact layout on small blobs, postings coding, case
// folding, no trigram across the separator, candidate evaluation (always a
// superset of the true matches), and a run over real names and rdata.

import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import RE2 from 're2';
import { describe, expect, test } from 'vitest';
import { compilePattern } from '../../../src/query/pattern.js';
import { ALL, NONE, queryHolds, trigramCode, type TrigramQuery } from '../../../src/model/trigram-query.js';
import { makeMatcher, recordMatches, scanRecords } from '../../../src/search/local/blob-searcher.js';
import fc from 'fast-check';
import {
  buildTrigramIndex, candidates, decodePostings, encodePostings, intersectPostings, mayMatch,
} from '../../../src/shard/trigram-index.js';
import { seededRandom } from '../../../src/demo/prng.js';
import { makeView } from '../../helpers/blob-view.js';


const code = (s: string) => trigramCode(s.charCodeAt(0), s.charCodeAt(1), s.charCodeAt(2));
const and = (...t: string[]): TrigramQuery => ({ op: 'and', trigrams: t.map(code).sort((a, b) => a - b), subs: [] });
const or = (...t: string[]): TrigramQuery => ({ op: 'or', trigrams: t.map(code).sort((a, b) => a - b), subs: [] });

const rng = seededRandom;

describe('postings coding', () => {
  test('delta LEB128 round trip across varint widths', () => {
    const ids = [0, 1, 127, 128, 255, 16_383, 16_384, 16_511, 2_097_151, 2_097_152, 268_435_455, 268_435_456, 4_000_000_000];
    const bytes = encodePostings(ids);
    expect(Array.from(encodePostings([0, 1, 129]))).toEqual([0x00, 0x01, 0x80, 0x01]);
    expect(Array.from(decodePostings(bytes, 0, bytes.length))).toEqual(ids);
    expect(() => encodePostings([3, 3])).toThrow(/ascend/);
  });

  // The native decoder and intersection against the encoder and a plain set intersection.
  test('decode and intersect agree with the encoder on any ascending lists, inside a larger buffer', () => {
    const ascending = fc.uniqueArray(fc.integer({ min: 0, max: 4_294_967_295 }), { maxLength: 300 })
      .map((a) => Uint32Array.from(a.sort((x, y) => x - y)));
    fc.assert(fc.property(ascending, ascending, fc.nat(5), (list, running, pad) => {
      const bytes = encodePostings(list);
      const buf = new Uint8Array(pad + bytes.length + pad).fill(0xff);
      buf.set(bytes, pad);
      expect(Array.from(decodePostings(buf, pad, pad + bytes.length))).toEqual(Array.from(list));
      const inList = new Set(list);
      expect(Array.from(intersectPostings(running, buf, pad, pad + bytes.length)))
        .toEqual(Array.from(running).filter((id) => inList.has(id)));
    }), { numRuns: 500 });
  });

  test('ranges outside the buffer are refused; damaged bytes stay within their range', () => {
    const bytes = encodePostings([1, 200, 70_000]);
    expect(() => decodePostings(bytes, 0, bytes.length + 1)).toThrow(RangeError);
    expect(() => decodePostings(bytes, 2, 1)).toThrow(RangeError);
    expect(() => intersectPostings(Uint32Array.of(1), bytes, 0, 99)).toThrow(RangeError);
    // A list cut inside a delta, and zeros (what a truncated mapping reads): bounded, one id per final byte.
    expect(Array.from(decodePostings(Uint8Array.of(0x01, 0x80, 0x80), 0, 3))).toEqual([1]);
    expect(Array.from(decodePostings(new Uint8Array(4), 0, 4))).toEqual([0, 0, 0, 0]);
    expect(Array.from(intersectPostings(Uint32Array.of(0, 5), new Uint8Array(4), 0, 4))).toEqual([0]);
  });
});

describe('buildTrigramIndex', () => {
  test('exact layout: keys ascending, starts, delta postings; upper case folded', () => {
    const idx = buildTrigramIndex(makeView(['abc', 'ABCD', 'xbc', 'ab']));
    expect(Array.from(idx.keys)).toEqual([code('abc'), code('bcd'), code('xbc')]);
    expect(Array.from(idx.starts)).toEqual([0, 2, 3, 4]);
    expect(Array.from(idx.postings)).toEqual([0, 1, 1, 2]);
  });

  test('trigrams never span the separator; ids are deduplicated per record', () => {
    const idx = buildTrigramIndex(makeView(['ab', 'cd', 'aaaaaa', '', 'a.', 'aaa']));
    expect(Array.from(idx.keys)).toEqual([code('aaa')]);
    expect(Array.from(decodePostings(idx.postings, idx.starts[0]!, idx.starts[1]!))).toEqual([2, 5]);
  });

  test('every printable byte is indexed as itself except A-Z', () => {
    const idx = buildTrigramIndex(makeView([' "\\', '~`{', 'Z[z']));
    expect(Array.from(idx.keys)).toEqual([code(' "\\'), code('z[z'), code('~`{')]);
  });

  test('an empty blob and a bad byte', () => {
    const empty = buildTrigramIndex({ blob: Buffer.alloc(0), offsets: Uint32Array.of(0) });
    expect([empty.keys.length, empty.starts.length, empty.postings.length]).toEqual([0, 1, 0]);
    expect(() => buildTrigramIndex(makeView(['ab\tc']))).toThrow(/byte 0x9 at blob offset 2/);
    expect(() => buildTrigramIndex(makeView(['\u00e9abc']))).toThrow(/byte 0xe9/);
  });

  test('large ids (multi-byte deltas) decode to the right records', () => {
    const records = Array.from({ length: 300_000 }, (_, i) => (i % 99_991 === 0 ? 'needle' : `r${i % 1000}`));
    const idx = buildTrigramIndex(makeView(records));
    const k = idx.keys.indexOf(code('eed'));
    expect(Array.from(decodePostings(idx.postings, idx.starts[k]!, idx.starts[k + 1]!))).toEqual([0, 99_991, 199_982, 299_973]);
  });
});

describe('candidates', () => {
  const records = ['paypal.com.', 'www.paypal.com.', 'pay.example.', 'pal.example.', 'paypal-login.net.', 'login.example.', 'x.'];
  const view = makeView(records);
  const idx = buildTrigramIndex(view);
  const n = records.length;

  test('all, none, missing trigrams, and/or', () => {
    expect(candidates(idx, ALL, n, n)).toBe('scan');
    expect(Array.from(candidates(idx, NONE, n, n) as Uint32Array)).toEqual([]);
    expect(Array.from(candidates(idx, and('zzz'), n, n) as Uint32Array)).toEqual([]);
    expect(Array.from(candidates(idx, and('pay', 'pal'), n, n) as Uint32Array)).toEqual([0, 1, 4]);
    expect(Array.from(candidates(idx, or('log', 'www'), n, n) as Uint32Array)).toEqual([1, 4, 5]);
    expect(Array.from(candidates(idx, or('zzz', 'www'), n, n) as Uint32Array)).toEqual([1]);
    const nested: TrigramQuery = { op: 'and', trigrams: [code('pay')], subs: [or('log', 'www')] };
    expect(Array.from(candidates(idx, nested, n, n) as Uint32Array)).toEqual([1, 4]);
  });

  test('mayMatch is false exactly where the index proves no candidate', () => {
    expect([ALL, NONE, and('zzz'), and('pay', 'pal'), or('zzz', 'qqq'), or('zzz', 'www')].map((q) => mayMatch(idx, q)))
      .toEqual([true, false, false, true, false, true]);
    expect(mayMatch(idx, { op: 'and', trigrams: [code('pay')], subs: [or('zzz', 'qqq')] })).toBe(false);
    // No keys at all (no index, or records under 3 bytes): never prune.
    expect(mayMatch(buildTrigramIndex(makeView(['ab', 'x.'])), and('zzz'))).toBe(true);
  });

  test('the budget turns large results into a scan', () => {
    expect(Array.from(candidates(idx, and('pay'), n, 4) as Uint32Array)).toEqual([0, 1, 2, 4]);
    expect(candidates(idx, and('pay'), n, 3)).toBe('scan');
    expect(candidates(idx, or('pay', 'log'), n, 3)).toBe('scan');
  });

  test('random queries on random records: candidates contain every record whose trigrams satisfy the query (property)', () => {
    const r = rng(3);
    const alpha = 'abcdeABC.';
    const recs = Array.from({ length: 2_000 },
      () => Array.from({ length: Math.floor(r() * 10) }, () => alpha[Math.floor(r() * alpha.length)]).join(''));
    const v = makeView(recs);
    const index = buildTrigramIndex(v);
    const trigramSets = recs.map((s) => {
      const t = s.toLowerCase();
      const set = new Set<number>();
      for (let i = 0; i + 3 <= t.length; i++) set.add(code(t.slice(i, i + 3)));
      return set;
    });
    const pool = ['abc', 'bcd', 'cde', 'aab', 'a.b', '.ab', 'eee', 'dab', 'ccc', 'zzz'];
    const randomQuery = (depth: number): TrigramQuery => {
      const ts = pool.filter(() => r() < 0.25).map(code).sort((a, b) => a - b);
      const subs = depth < 2 && r() < 0.4 ? [randomQuery(depth + 1), randomQuery(depth + 1)] : [];
      if (ts.length === 0 && subs.length === 0) return r() < 0.5 ? and('abc') : or('abc', 'bcd');
      return { op: r() < 0.5 ? 'and' : 'or', trigrams: ts, subs };
    };
    let evaluated = 0;
    for (let k = 0; k < 500; k++) {
      const q = randomQuery(0);
      const truth = recs.map((_, i) => i).filter((i) => queryHolds(q, (c) => trigramSets[i]!.has(c)));
      const cand = candidates(index, q, recs.length, recs.length);
      if (!mayMatch(index, q)) expect(truth).toEqual([]);
      if (cand === 'scan') continue;
      evaluated++;
      const set = new Set(cand);
      expect(truth.filter((i) => !set.has(i))).toEqual([]);
      expect(Array.from(cand)).toEqual([...cand].sort((a, b) => a - b));
    }
    expect(evaluated).toBeGreaterThan(400);
  });
});

// ---------------------------------------------------------------------------
// Real data: names from the Majestic top list, owner names and rdata of the root zone.

const realDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../../shared/data/real');
const majestic = path.join(realDir, 'lists/majestic_million_top15000.csv');
const rootZone = path.join(realDir, 'zones/root.zone.2024101100');
const haveReal = existsSync(majestic) && existsSync(rootZone);

(haveReal ? describe : describe.skip)(`real data (${haveReal ? 'present' : 'absent: ' + realDir + ' not found'})`, () => {
  const names = new Set<string>();
  const rdata = new Set<string>();
  if (haveReal) {
    for (const line of readFileSync(majestic, 'latin1').split('\n').slice(1)) {
      const domain = line.split(',')[2];
      if (domain) names.add(domain.toLowerCase() + '.');
    }
    for (const line of readFileSync(rootZone, 'latin1').split('\n')) {
      if (line.startsWith(';') || line.trim() === '') continue;
      const f = line.split(/\s+/);
      names.add(f[0]!.toLowerCase());
      rdata.add(f.slice(4).join(' '));
    }
  }
  const columns: Array<[string, string[]]> = [['names', [...names].sort()], ['rdata', [...rdata].sort()]];

  test.each(columns)('%s: trigram candidates, blob scan and per-record check agree', (_, records) => {
    expect(records.length).toBeGreaterThan(10_000);
    const view = makeView(records);
    const index = buildTrigramIndex(view);
    const patterns = ['google', '^(.*\\.)?paypal[^.]*\\.com\\.$', '.*-login\\..*', '^[a-z0-9]{30,}\\.', '\\.co\\.uk\\.$', 'xn--',
      '^[0-9]+ 8 2 [0-9A-F]{64}$', 'gtld-servers', '\\bns[0-9]\\.', 'amazon|microsoft', '^.{63}\\.', '[^.]*[0-9]{4}[^.]*\\.com\\.$'];
    for (const pattern of patterns) {
      const p = compilePattern('regex', pattern);
      const re = makeMatcher(p);
      const ref = new RE2(p.recordSource);
      const want: number[] = [];
      records.forEach((rec, i) => { if (ref.test(Buffer.from(rec, 'latin1'))) want.push(i); });
      const scanned: number[] = [];
      scanRecords(re, view, 0, records.length, (i) => { scanned.push(i); return true; }, () => false);
      expect({ pattern, scanned }).toEqual({ pattern, scanned: want });
      const cand = candidates(index, p.trigrams, records.length, records.length);
      if (cand !== 'scan') {
        const confirmed = Array.from(cand).filter((i) => recordMatches(re, view, i));
        expect({ pattern, confirmed }).toEqual({ pattern, confirmed: want });
      }
    }
  });
});
