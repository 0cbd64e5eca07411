// The pattern index of standing watches (src/search/watch-patterns.ts):
// what it reports for each record must be exactly what each watch's own
// pattern says of it (query/pattern.ts recordSource, the definition of a
// match), however many patterns share its RE2.Sets, and whichever watches
// come and go.

import { describe, expect, it } from 'vitest';
import RE2 from 're2';
import { LIMITS } from '../../../src/config/limits.js';
import { compilePattern, recordMatcher, type CompiledPattern } from '../../../src/query/pattern.js';
import type { BlobColumns } from '../../../src/shard/blob.js';
import { PatternIndex } from '../../../src/search/watch-patterns.js';

interface Sub {
  stamp: number;
  name: string;
  p: CompiledPattern;
}

function blobOf(records: string[]): BlobColumns {
  const blob = Buffer.from(records.map((r) => `${r}\n`).join(''), 'latin1');
  const offsets = new Uint32Array(records.length + 1);
  let at = 0;
  records.forEach((r, i) => {
    offsets[i] = at;
    at += r.length + 1;
  });
  offsets[records.length] = at;
  return { blob, offsets };
}

const RECORDS = [
  'paypal-login.example.com.', 'www.paypal.com.', 'PAYPAL.de.', 'login.bank.net.', 'a.', 'x-login.y.org.', 'cdn123.example.net.',
  '10 mail.example.com.', '"v=spf1 include:_spf.example.com ~all"', 'ns1.example.', 'abc.def.ghi.', 'zz.', 'secure-account.apple-id.io.',
  ...Array.from({ length: 300 }, (_, i) => `host${i}.n${i % 7}.example${i % 3 === 0 ? '-login' : ''}.com.`),
];

const PATTERNS: ['regex' | 'glob', string][] = [
  ['regex', 'paypal'], ['regex', '^www\\.'], ['regex', 'login\\.'], ['regex', '(?-i)PAYPAL'], ['regex', '\\.com\\.$'],
  ['glob', '*.example.com.'], ['glob', 'host1?.*'], ['regex', '^[a-z]\\.$'], ['regex', '.'], ['regex', '^.*$'],
  ['regex', 'n[0-3]\\.example'], ['regex', '\\bspf\\b'], ['regex', 'apple-id|paypal'], ['glob', '*-login*'], ['regex', 'zz+\\.'],
  ['regex', 'never-here'], ['regex', '^ns[0-9]+\\.'], ['regex', 'host(1|2)[0-9]{2}\\.'],
];

function reference(subs: readonly Sub[], records: readonly string[]): string[][] {
  const res = subs.map((s) => recordMatcher(s.p));
  return records.map((r) => subs.filter((_, i) => res[i]!.test(Buffer.from(r, 'latin1'))).map((s) => s.name).sort());
}

function matched(index: PatternIndex<Sub>, records: string[], wanted = (_: number) => true): string[][] {
  while (!index.prepare()) { /* one set per call */ }
  const out: string[][] = records.map(() => []);
  // Ranges of odd sizes, as a feed slices its work.
  for (let a = 0; a < records.length; a += 37) {
    index.match(blobOf(records), a, Math.min(records.length, a + 37), wanted, (rec, subs) => {
      out[rec] = subs.map((s) => s.name).sort();
    });
  }
  return out;
}

describe('the pattern index of standing watches', () => {
  const subs: Sub[] = PATTERNS.flatMap(([m, p], i) => [0, 1].map((k) => ({ stamp: 0, name: `${i}.${k}`, p: compilePattern(m, p) })));

  it('reports exactly the watches whose pattern matches each record, one set or many', () => {
    for (const perSet of [1, 3, LIMITS.watchPatternsPerSet]) {
      const index = new PatternIndex<Sub>(perSet);
      for (const s of subs) index.add(s, s.p);
      expect(matched(index, RECORDS)).toEqual(reference(subs, RECORDS));
      expect(index.stats().patterns).toBe(PATTERNS.length - 2); // `.` and `^.*$` need no RE2
    }
  });

  it('forgets a watch that leaves, keeps those that share its pattern, and takes newcomers', () => {
    const index = new PatternIndex<Sub>(4);
    for (const s of subs) index.add(s, s.p);
    expect(matched(index, RECORDS)).toEqual(reference(subs, RECORDS));
    const left = subs.filter((_, i) => i % 3 === 0);
    for (const s of left) index.remove(s, s.p);
    const staying = subs.filter((_, i) => i % 3 !== 0);
    expect(matched(index, RECORDS)).toEqual(reference(staying, RECORDS));
    for (const s of left.slice(0, 5)) index.add(s, s.p);
    const now = [...staying, ...left.slice(0, 5)];
    expect(matched(index, RECORDS)).toEqual(reference(now, RECORDS));
    for (const s of now) index.remove(s, s.p);
    expect(index.empty).toBe(true);
    expect(matched(index, RECORDS)).toEqual(RECORDS.map(() => []));
  });

  it('skips records the caller does not want', () => {
    const index = new PatternIndex<Sub>();
    for (const s of subs) index.add(s, s.p);
    const even = (rec: number) => rec % 2 === 0;
    expect(matched(index, RECORDS, even)).toEqual(reference(subs, RECORDS).map((m, i) => (even(i) ? m : [])));
  });

  it('agrees with RE2.Set on the binding installed: one set of every blob form matches as each alone', () => {
    const sources = subs.map((s) => s.p.blobSource);
    const set = new RE2.Set(sources);
    for (const r of RECORDS) {
      const b = Buffer.from(r, 'latin1');
      expect([r, set.match(b)]).toEqual([r, sources.flatMap((src, i) => (new RE2(src).test(b) ? [i] : []))]);
    }
  });
});
