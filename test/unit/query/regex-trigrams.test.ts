// Trigram queries: the plans of issue 3's query classes, the algebra's
// simplifications, and the property that matters: a record that matches the
// regex always satisfies its query (so the index never loses a match).

import RE2 from 're2';
import { describe, expect, test } from 'vitest';
import { compilePattern } from '../../../src/query/pattern.js';
import { andQuery, orQuery } from '../../../src/query/regex-trigrams.js';
import { ALL, formatQuery, NONE, queryHolds, trigramCode, type TrigramQuery } from '../../../src/model/trigram-query.js';
import { seededRandom } from '../../../src/demo/prng.js';

const plan = (pattern: string) => formatQuery(compilePattern('regex', pattern).trigrams);

const rng = seededRandom;

const tri = (s: string) => trigramCode(s.charCodeAt(0), s.charCodeAt(1), s.charCodeAt(2));

function trigramsOfText(text: string): Set<number> {
  const t = text.toLowerCase();
  const out = new Set<number>();
  for (let i = 0; i + 3 <= t.length; i++) out.add(tri(t.slice(i, i + 3)));
  return out;
}

describe('plans', () => {
  test('issue 3 query classes', () => {
    expect(plan('paypal')).toBe('and(ayp pal pay ypa)');
    expect(plan('^(.*\\.)?paypal[^.]*\\.com\\.$')).toBe('and(.co ayp com om. pal pay ypa)');
    expect(plan('.*-login\\..*')).toBe('and(-lo gin in. log ogi)');
    expect(plan('^[a-z0-9]{30,}\\.')).toBe('all');
    expect(plan('.')).toBe('all');
  });

  test('alternation is an or; common trigrams are factored out', () => {
    expect(plan('foo|bar')).toBe('or(bar foo)');
    expect(plan('paypal|paypai')).toBe('and(ayp pay ypa or(pai pal))');
    expect(plan('(abc|abd)xyz')).toBe('and(xyz or(abc abd) or(bcx bdx) or(cxy dxy))');
  });

  test('atoms are the bytes they match, lower-cased', () => {
    expect(plan('PAYPAL')).toBe('and(ayp pal pay ypa)');
    expect(plan('(?-i)ABC')).toBe('and(abc)');
    expect(plan('\\x{212A}ey')).toBe('and(key)'); // KELVIN SIGN folds to k
    expect(plan('(?-i)\\x{212A}ey')).toBe('none'); // ...but matches no ASCII byte without folding
    expect(plan('\\n')).toBe('none');
    expect(plan('abc\u00e9')).toBe('none');
    expect(plan('abc\\n|xyz')).toBe('and(xyz)');
    expect(plan('a[bB]c')).toBe('and(abc)');
    expect(plan('ab[cd]')).toBe('or(abc abd)');
  });

  test('repetitions, assertions, short patterns', () => {
    expect(plan('ab')).toBe('all');
    expect(plan('abc*')).toBe('all');
    expect(plan('abcd?')).toBe('and(abc)');
    expect(plan('(abc)+')).toBe('and(abc)');
    expect(plan('(abc){0}x')).toBe('all');
    expect(plan('\\babc\\b$')).toBe('and(abc)');
    expect(plan('a.c')).toBe('all');
    expect(plan('')).toBe('all');
  });
});

describe('query algebra', () => {
  test('identities', () => {
    const q: TrigramQuery = { op: 'and', trigrams: [tri('abc')], subs: [] };
    expect(andQuery(ALL, q)).toBe(q);
    expect(andQuery(NONE, q)).toBe(NONE);
    expect(orQuery(ALL, q)).toBe(ALL);
    expect(orQuery(NONE, q)).toBe(q);
    expect(formatQuery(andQuery(q, { op: 'and', trigrams: [tri('abd')], subs: [] }))).toBe('and(abc abd)');
    expect(formatQuery(orQuery(q, { op: 'and', trigrams: [tri('abc'), tri('xyz')], subs: [] }))).toBe('and(abc)');
  });

  test('and/or agree with boolean semantics on random queries (property)', () => {
    const r = rng(5);
    const codes = ['abc', 'bcd', 'cde', 'def', 'efg', 'fgh'].map(tri);
    const randomQuery = (depth: number): TrigramQuery => {
      const roll = r();
      if (roll < 0.05) return ALL;
      if (roll < 0.1) return NONE;
      const pickCodes = codes.filter(() => r() < 0.4).sort((a, b) => a - b);
      const subs = depth < 2 && r() < 0.5 ? [randomQuery(depth + 1), randomQuery(depth + 1)] : [];
      let q: TrigramQuery = ALL;
      const op = r() < 0.5 ? andQuery : orQuery;
      for (const c of pickCodes) q = op === andQuery ? andQuery(q, { op: 'and', trigrams: [c], subs: [] }) :
        (q === ALL ? { op: 'and', trigrams: [c], subs: [] } : orQuery(q, { op: 'and', trigrams: [c], subs: [] }));
      for (const s of subs) q = op(q, s);
      return q;
    };
    for (let k = 0; k < 3000; k++) {
      const q = randomQuery(0);
      const s = randomQuery(0);
      const present = new Set(codes.filter(() => r() < 0.5));
      const has = (c: number) => present.has(c);
      expect(queryHolds(andQuery(q, s), has)).toBe(queryHolds(q, has) && queryHolds(s, has));
      expect(queryHolds(orQuery(q, s), has)).toBe(queryHolds(q, has) || queryHolds(s, has));
    }
  });
});

describe('a matching record always satisfies the query (property)', () => {
  test('random regexes over a small alphabet, random texts', () => {
    const r = rng(11);
    const pieces = ['a', 'b', 'c', 'ab', 'abc', 'bca', 'A', 'B', '.', '[ab]', '[abc]', '[^a]', '\\.', 'x', 'xyz', '\\w', '\\d',
      '(?-i)a', '(?-i)B', '\\x{212A}', 'k', '1', '12'];
    const reps = ['', '', '', '*', '+', '?', '{2}', '{1,3}', '{0}', '{2,}'];
    const gen = (depth: number): string => {
      let s = '';
      const n = 1 + Math.floor(r() * 5);
      for (let i = 0; i < n; i++) {
        let piece = depth < 2 && r() < 0.2 ? `(${gen(depth + 1)}|${gen(depth + 1)})` : pieces[Math.floor(r() * pieces.length)]!;
        if (r() < 0.25) piece = `(?:${piece})${reps[Math.floor(r() * reps.length)]}`;
        s += piece;
      }
      return s;
    };
    const alphabet = 'aabbccABCxyzXYZ.k K12';
    const texts = Array.from({ length: 400 }, () => Array.from({ length: Math.floor(r() * 14) },
      () => alphabet[Math.floor(r() * alphabet.length)]).join(''));
    let checked = 0;
    let selective = 0;
    for (let k = 0; k < 1500; k++) {
      const pattern = gen(0);
      const q = compilePattern('regex', pattern).trigrams;
      if (q.op !== 'all') selective++;
      const ref = new RE2('(?i)' + pattern);
      for (const text of texts) {
        if (!ref.test(Buffer.from(text, 'latin1'))) continue;
        const has = trigramsOfText(text);
        expect({ pattern, text, holds: queryHolds(q, (c) => has.has(c)) }).toEqual({ pattern, text, holds: true });
        checked++;
      }
    }
    expect(checked).toBeGreaterThan(10_000);
    expect(selective).toBeGreaterThan(300);
  });
});
