import { describe, expect, it } from 'vitest';
import { parseQueryString, percentDecode } from '../../../src/query/percent.js';

describe('percentDecode (compat.md "Values")', () => {
  it('decodes each escape once, keeps + literal', () => {
    expect(percentDecode('%2A.example.com')).toBe('*.example.com');
    expect(percentDecode('a%2Fb%5Cc%24%22%20%3A%2C%2B')).toBe('a/b\\c$" :,+');
    expect(percentDecode('a+b')).toBe('a+b');
    expect(percentDecode('%252A')).toBe('%2A');
    expect(percentDecode('%c3%a9')).toBe('é');
  });
  it('bug: a raw character beyond U+FFFF next to an escape became two U+FFFD (fuzz counterexample "%00\u{10000}")', () => {
    // Clients send raw UTF-8; uWS hands it over decoded, so such a character is a surrogate pair here.
    expect(percentDecode('%00\u{10000}')).toBe('\u0000\u{10000}');
    expect(percentDecode('\u{1F600}%41')).toBe('\u{1F600}A');
    expect(parseQueryString('exclude=%2A\u{1F600}')!.get('exclude')).toBe('*\u{1F600}');
  });
  it('refuses malformed escapes and invalid UTF-8', () => {
    expect(percentDecode('%')).toBeUndefined();
    expect(percentDecode('%2')).toBeUndefined();
    expect(percentDecode('%zz')).toBeUndefined();
    expect(percentDecode('%ff')).toBeUndefined();
  });
});

describe('parseQueryString', () => {
  it('splits on & and =, decodes once, + stays a plus', () => {
    const q = parseQueryString('limit=5&exclude=a+b%5B0-9%5D&exclude2=[x]&flag')!;
    expect(q.get('limit')).toBe('5');
    expect(q.get('exclude')).toBe('a+b[0-9]');
    expect(q.get('exclude2')).toBe('[x]');
    expect(q.get('flag')).toBe('');
  });
  it('returns undefined on a malformed escape', () => {
    expect(parseQueryString('limit=%zz')).toBeUndefined();
  });
});
