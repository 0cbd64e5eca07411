// The RE2 syntax parser (the binding's translation has its own test file).
// The parser must cut atoms where RE2 does and scope flags as RE2 does; the
// end-to-end proof is the fuzz in pattern.test.ts, these pin the rules.

import RE2 from 're2';
import { describe, expect, test } from 'vitest';
import { compilePattern } from '../../../src/query/pattern.js';
import { DEFAULT_FLAGS, parseRegex, RegexSyntaxError, type RegexNode } from '../../../src/query/regex-syntax.js';

/** A compact rendering of an AST: atoms as their source (with /i when folding), the rest as s-expressions. */
function show(n: RegexNode): string {
  switch (n.kind) {
    case 'empty': return 'empty';
    case 'atom': return n.source + (n.fold ? '/i' : '') + (n.dotNl ? '/s' : '');
    case 'assert': return n.assertion;
    case 'concat': return `cat(${n.subs.map(show).join(' ')})`;
    case 'alternate': return `alt(${n.subs.map(show).join(' ')})`;
    case 'group': return `${n.capture ? 'cap' : 'grp'}${n.name ? '<' + n.name + '>' : ''}(${show(n.sub)})`;
    case 'repeat': return `rep{${n.min},${n.max}${n.greedy ? '' : ',lazy'}${n.counted ? ',counted' : ''}}(${show(n.sub)})`;
  }
}

const parse = (s: string) => show(parseRegex(s, DEFAULT_FLAGS));

describe('parseRegex', () => {
  test('atoms, classes and escapes are cut where RE2 cuts them', () => {
    expect(parse('a.b')).toBe('cat(\\x{61} . \\x{62})');
    expect(parse('[]a][^]x]')).toBe('cat([]a] [^]x])');
    expect(parse('[[:alpha]x]')).toBe('cat([[:alpha] \\x{78} \\x{5D})');
    expect(parse('[[:alpha:]-z]')).toBe('[[:alpha:]-z]');
    expect(parse('[!-[:x]y')).toBe('cat([!-[:x] \\x{79})');
    expect(parse('\\pLx\\p{Greek}\\PN\\p{^Lu}')).toBe('cat(\\pL \\x{78} \\p{Greek} \\PN \\p{^Lu})');
    expect(parse('\\d\\S\\w\\C')).toBe('cat(\\d \\S \\w \\C)');
    expect(parse('\\0123\\x41\\x{1F600}\\n\\.')).toBe('cat(\\x{A} \\x{33} \\x{41} \\x{1F600} \\x{A} \\x{2E})');
    expect(parse('\\101\\08')).toBe('cat(\\x{41} \\x{0} \\x{38})');
    expect(parse('\\Qa.\\E*')).toBe('cat(\\x{61} rep{0,-1}(\\x{2E}))');
    expect(parse('\\Qab\\\\E')).toBe('cat(\\x{61} \\x{62} \\x{5C})');
    expect(parse('\\Qab')).toBe('cat(\\x{61} \\x{62})');
    expect(parse('😀')).toBe('\\x{1F600}');
  });

  test('`{` is a repetition only in RE2 form; otherwise a literal', () => {
    expect(parse('a{2}')).toBe('rep{2,2,counted}(\\x{61})');
    expect(parse('a{2,}')).toBe('rep{2,-1,counted}(\\x{61})');
    expect(parse('a{0,3}?')).toBe('rep{0,3,lazy,counted}(\\x{61})');
    expect(parse('a{01}')).toBe('cat(\\x{61} \\x{7B} \\x{30} \\x{31} \\x{7D})');
    expect(parse('a{,2}')).toBe('cat(\\x{61} \\x{7B} \\x{2C} \\x{32} \\x{7D})');
    expect(parse('a{1000000000}')).toBe('cat(\\x{61} \\x{7B} \\x{31} \\x{30} \\x{30} \\x{30} \\x{30} \\x{30} \\x{30} \\x{30} \\x{30} \\x{30} \\x{7D})');
    expect(parse('{')).toBe('\\x{7B}');
  });

  test('flags: (?i) lasts to the end of the enclosing group, across |; (?U) flips laziness', () => {
    expect(parse('a(?i)b|c')).toBe('alt(cat(\\x{61} \\x{62}/i) \\x{63}/i)');
    expect(parse('(?:(?i)a)b')).toBe('cat(grp(\\x{61}/i) \\x{62})');
    expect(parse('(?i-s:.)(?s).')).toBe('cat(grp(./i) ./s)');
    expect(parse('(?U)a*a*?')).toBe('cat(rep{0,-1,lazy}(\\x{61}) rep{0,-1}(\\x{61}))');
    expect(parse('(?m)^$(?-m)^$')).toBe('cat(beginLine endLine beginText endText)');
    expect(parse('(?)a')).toBe('\\x{61}');
    expect(show(parseRegex('a', { ...DEFAULT_FLAGS, fold: true }))).toBe('\\x{61}/i');
  });

  test('groups and assertions', () => {
    expect(parse('(a)(?:b)(?P<x>c)(?<y>d)')).toBe('cat(cap(\\x{61}) grp(\\x{62}) cap<x>(\\x{63}) cap<y>(\\x{64}))');
    expect(parse('\\A\\b\\B\\z')).toBe('cat(beginText wordBoundary notWordBoundary endText)');
    expect(parse('a||')).toBe('alt(\\x{61} empty empty)');
    expect(parse('()')).toBe('cap(empty)');
    expect(parse('')).toBe('empty');
    expect(parse('a(?i)*')).toBe('rep{0,-1}(\\x{61})');
  });

  test.each([
    ['(ab', 0, 'missing ): (ab'],
    ['a)', 1, 'unexpected ): a)'],
    ['a**', 1, 'bad repetition operator: **'],
    ['a*{2}', 1, 'bad repetition operator: *{2}'],
    ['|*', 1, 'missing argument to repetition operator: *'],
    ['a{3,2}', 1, 'invalid repetition size: {3,2}'],
    ['(a{50}){50}', 7, 'invalid repetition size: {50}'],
    ['x[b-a]', 2, 'invalid character class range: b-a'],
    ['x[ab', 1, 'missing ]: [ab'],
    ['x\\', 1, 'trailing \\'],
    ['\\xZZ', 0, 'invalid escape sequence: \\xZZ'],
    ['\\x{110000}', 0, 'invalid escape sequence: \\x{110000'],
    ['\\1', 0, 'invalid escape sequence: \\1'],
    ['\\é', 0, 'invalid escape sequence: \\é'],
    ['(?=a)', 0, 'invalid perl operator: (?='],
    ['(?<!a)', 0, 'invalid perl operator: (?<!'],
    ['(?i', 0, 'invalid perl operator: (?i'],
    ['(?-)', 0, 'invalid perl operator: (?-)'],
    ['(?P<a-b>x)', 0, 'invalid named capture group: (?P<a-b>'],
    ['[[:nope:]]', 1, 'invalid character class range: [:nope:]'],
  ])('rejects %j at %d', (pattern, pos, message) => {
    let err: unknown;
    try { parseRegex(pattern); } catch (e) { err = e; }
    expect(err).toBeInstanceOf(RegexSyntaxError);
    expect({ pos: (err as RegexSyntaxError).pos, message: (err as Error).message }).toEqual({ pos, message });
    // RE2 rejects it too.
    expect(() => new RE2(pattern)).toThrow();
  });

  test('deep nesting (the longest pattern allowed is all parentheses) parses and compiles', () => {
    const deep = '('.repeat(2000) + 'a' + ')'.repeat(2000);
    expect(() => new RE2(deep)).not.toThrow();
    expect(compilePattern('regex', deep).blobSource).toBe('[\\x41\\x61]');
    const deepAlt = '(?:a|'.repeat(600) + 'b' + ')'.repeat(600);
    expect(compilePattern('regex', deepAlt).blobSource.length).toBeGreaterThan(1000);
  });
});
