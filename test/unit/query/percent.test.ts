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
