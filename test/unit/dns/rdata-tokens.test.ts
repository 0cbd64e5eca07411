import { describe, expect, it } from 'vitest';
import { joinedRest, Tokens, tokenize, type TokenizerState } from '../../../src/dns/rdata/tokens.js';

function words(text: string, state: TokenizerState = { depth: 0 }): [string, boolean][] {
  const t = new Tokens();
  tokenize(text, t, state);
  return t.text.slice(0, t.length).map((w, i) => [w, t.quoted[i]!]);
}

describe('tokenize', () => {
  it('splits on whitespace, parentheses and quotes, and marks quoted words', () => {
    expect(words('a\tb  (c)"d e"f ; g h')).toEqual([['a', false], ['b', false], ['c', false], ['d e', true], ['f', false]]);
    expect(words('""')).toEqual([['', true]]);
  });

  it('keeps escapes in the words: a backslash escapes the next character everywhere', () => {
    expect(words('a\\ b c\\;d "x\\"y" e\\(')).toEqual([['a\\ b', false], ['c\\;d', false], ['x\\"y', true], ['e\\(', false]]);
    expect(words('end\\')).toEqual([['end\\', false]]);
  });

  it('carries the parenthesis depth across calls, so a record may span lines', () => {
    const state = { depth: 0 };
    const t = new Tokens();
    tokenize('a ( b ; comment (', t, state);
    expect(state.depth).toBe(1);
    tokenize('c ) d', t, state);
    expect(state.depth).toBe(0);
    expect(t.text.slice(0, t.length)).toEqual(['a', 'b', 'c', 'd']);
  });

  it('reuses one Tokens: clear() empties it', () => {
    const t = new Tokens();
    tokenize('a b c', t, { depth: 0 });
    t.clear();
    tokenize('d', t, { depth: 0 });
    expect([t.length, t.text[0]]).toEqual([1, 'd']);
  });

  it('throws DnsFormatError for an unterminated quote or an unmatched ")"', () => {
    expect(() => words('"open')).toThrow(expect.objectContaining({ code: 'DNS_FORMAT', message: 'unterminated quoted string' }));
    expect(() => words('a )')).toThrow(expect.objectContaining({ code: 'DNS_FORMAT', message: '")" without a matching "("' }));
  });
});

describe('joinedRest', () => {
  it('concatenates the remaining words and refuses quoted ones', () => {
    const t = new Tokens();
    tokenize('skip AB CD EF', t, { depth: 0 });
    expect(joinedRest(t, 1)).toBe('ABCDEF');
    expect(joinedRest(t, 4)).toBe('');
    tokenize('"GH"', t, { depth: 0 });
    expect(() => joinedRest(t, 1)).toThrow('unexpected quoted string "GH"');
  });
});
