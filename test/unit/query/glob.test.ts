// Globs: translation to RE2, matching semantics (anchored, case-insensitive,
// `*` crosses dots), errors with positions, and blob scan = per-record check.

import RE2 from 're2';
import { describe, expect, test } from 'vitest';
import { globToRegex } from '../../../src/query/glob.js';
import { compilePattern } from '../../../src/query/pattern.js';
import { formatQuery } from '../../../src/model/trigram-query.js';
import { makeMatcher, scanRecords } from '../../../src/search/local/blob-searcher.js';
import { makeView } from '../../helpers/blob-view.js';


const RECORDS = [
  'example.com.', 'www.example.com.', 'a.b.example.com.', 'WWW.EXAMPLE.COM.', 'www.example.com.au.', 'wwwexample.com.',
  'ww.example.com.', 'w1.example.com.', 'wx.example.com.', '*.example.com.', 'a]b.', 'a-b.', 'a\\b.', 'ab.', 'a b.',
  'x9.net.', 'x.net.', 'xy.net.', '10 mx.example.', '"v=spf1 -all"', '',
];

function globHits(glob: string): string[] {
  const view = makeView(RECORDS);
  const hits: string[] = [];
  scanRecords(makeMatcher(compilePattern('glob', glob)), view, 0, RECORDS.length,
    (i) => { hits.push(RECORDS[i]!); return true; }, () => false);
  // The per-record definition must agree with the blob scan.
  const ref = new RE2(compilePattern('glob', glob).recordSource);
  expect(hits).toEqual(RECORDS.filter((r) => ref.test(Buffer.from(r, 'latin1'))));
  return hits;
}

describe('globToRegex', () => {
  test('translation', () => {
    expect(globToRegex('*.example.com.')).toBe('^.*\\x{2E}example\\x{2E}com\\x{2E}$');
    expect(globToRegex('w?.x')).toBe('^w.\\x{2E}x$');
    expect(globToRegex('**a')).toBe('^.*a$');
    expect(globToRegex('[a-c]')).toBe('^[\\x{61}-\\x{63}]$');
    expect(globToRegex('[!.]')).toBe('^[^\\x{2E}]$');
    expect(globToRegex('[^.]')).toBe('^[^\\x{2E}]$');
    expect(globToRegex('[]a]')).toBe('^[\\x{5D}\\x{61}]$');
    expect(globToRegex('[a-]')).toBe('^[\\x{61}\\x{2D}]$');
    expect(globToRegex('[[:digit:]x]')).toBe('^[[:digit:]\\x{78}]$');
    expect(globToRegex('\\*\\?\\[')).toBe('^\\x{2A}\\x{3F}\\x{5B}$');
    expect(globToRegex('[\\]\\-]')).toBe('^[\\x{5D}\\x{2D}]$');
    expect(globToRegex('a/b')).toBe('^a\\x{2F}b$');
    expect(globToRegex('')).toBe('^$');
  });

  test.each([
    ['[abc', 'invalid glob at position 0: unterminated ['],
    ['ab[]', 'invalid glob at position 2: unterminated ['],
    ['x[!]', 'invalid glob at position 1: unterminated ['],
    ['abc\\', 'invalid glob at position 3: trailing backslash'],
    ['a[b\\', 'invalid glob at position 3: trailing backslash'],
    ['a[[:foo:]]', 'invalid glob at position 2: unknown character class [:foo:]'],
    ['ab[z-a]', 'invalid glob at position 3: invalid range z-a'],
  ])('error %j', (glob, message) => {
    let err: unknown;
    try { compilePattern('glob', glob); } catch (e) { err = e; }
    expect((err as { code?: string }).code).toBe('BAD_PATTERN');
    expect((err as Error).message).toBe(message);
  });
});

describe('glob matching', () => {
  test('* crosses dots and matches the empty string; anchored at both ends', () => {
    expect(globHits('*.example.com.')).toEqual(['www.example.com.', 'a.b.example.com.', 'WWW.EXAMPLE.COM.', 'ww.example.com.',
      'w1.example.com.', 'wx.example.com.', '*.example.com.']);
    expect(globHits('*example.com.')).toEqual(['example.com.', 'www.example.com.', 'a.b.example.com.', 'WWW.EXAMPLE.COM.',
      'wwwexample.com.', 'ww.example.com.', 'w1.example.com.', 'wx.example.com.', '*.example.com.']);
    expect(globHits('example.com')).toEqual([]);
    expect(globHits('*')).toEqual(RECORDS);
  });

  test('? is exactly one character', () => {
    expect(globHits('w?.example.com.')).toEqual(['ww.example.com.', 'w1.example.com.', 'wx.example.com.']);
    expect(globHits('x?.net.')).toEqual(['x9.net.', 'xy.net.']);
  });

  test('brackets, negation, POSIX classes, escapes', () => {
    expect(globHits('x[[:digit:]].net.')).toEqual(['x9.net.']);
    expect(globHits('x[![:digit:]].net.')).toEqual(['xy.net.']);
    expect(globHits('x[^0-9].net.')).toEqual(['xy.net.']);
    expect(globHits('a[]-]b.')).toEqual(['a]b.', 'a-b.']);
    expect(globHits('a\\\\b.')).toEqual(['a\\b.']);
    expect(globHits('\\*.example.com.')).toEqual(['*.example.com.']);
    expect(globHits('a[ ]b.')).toEqual(['a b.']);
    expect(globHits('"v=spf1 *"')).toEqual(['"v=spf1 -all"']);
  });

  test('case-insensitive', () => {
    expect(globHits('www.EXAMPLE.com.')).toEqual(['www.example.com.', 'WWW.EXAMPLE.COM.']);
    expect(globHits('[W]ww.example.com.')).toEqual(['www.example.com.', 'WWW.EXAMPLE.COM.']);
    expect(globHits('x[[:upper:]].net.')).toEqual(['xy.net.']);
  });

  test('trigram plans', () => {
    expect(formatQuery(compilePattern('glob', '*.paypal.com.').trigrams)).toBe('and(.co .pa al. ayp com l.c om. pal pay ypa)');
    expect(formatQuery(compilePattern('glob', '*').trigrams)).toBe('all');
    expect(formatQuery(compilePattern('glob', 'a?').trigrams)).toBe('all');
  });
});
