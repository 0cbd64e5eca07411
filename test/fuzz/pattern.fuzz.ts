// Fuzz target: regex and glob compilation (src/query/pattern.ts, glob.ts,
// regex-syntax.ts) and the blob matcher a scan worker runs
// (src/search/local/blob-searcher.ts, the trigram index's candidates).
//
// Properties, for patterns from a small regex grammar over a DNS-ish
// alphabet, raw syntax soup, and generated globs:
// - regex: compilePattern accepts exactly when RE2 accepts the pattern with
//   the case folding our semantics add (new RE2('(?i)' + pattern)) and it is
//   within LIMITS.patternCharsMax; a refusal is a BAD_PATTERN error naming a
//   position inside the pattern, never another exception;
// - glob: compilePattern accepts exactly when a straightforward reference
//   translation of glob.ts's documented syntax (written here, to a
//   JavaScript RegExp) accepts, and refusals are BAD_PATTERN errors;
// - on generated records, the blob scan (from any record range) and the
//   trigram-planned path find exactly the records the reference matches:
//   RE2 per record for a regex, the reference RegExp for a glob; a pattern
//   marked everyRecord matches every record.

import fc from 'fast-check';
import RE2 from 're2';
import { describe, expect, test } from 'vitest';
import { LIMITS } from '../../src/config/limits.js';
import { compilePattern, recordMatcher, type CompiledPattern } from '../../src/query/pattern.js';
import { makeMatcher, recordMatches, scanRecords } from '../../src/search/local/blob-searcher.js';
import { buildTrigramIndex, candidates } from '../../src/shard/trigram-index.js';
import { makeView } from '../helpers/blob-view.js';
import { checkProperty, FUZZ_SEED, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';

const RUNS = runsFor(500);

// ---------------------------------------------------------------------------
// Records: what flex columns hold (printable ASCII, never empty): names and
// rdata-like text over a DNS-ish alphabet with the characters that make
// blob scans go wrong (space, quotes, backslash, upper case).

const recordChar = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...'abcdeksxyz019.-_') },
  { weight: 2, arbitrary: fc.constantFrom(...'AKSX" \\*[]()') },
  { weight: 1, arbitrary: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)) },
);
const recordArb = fc.oneof(
  fc.string({ unit: recordChar, minLength: 1, maxLength: 24 }),
  fc.array(fc.string({ unit: fc.constantFrom(...'abcksxz0-'), minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 4 })
    .map((labels) => labels.join('.') + '.'),
);
const recordsArb = fc.array(recordArb, { minLength: 1, maxLength: 40 });

// ---------------------------------------------------------------------------
// Regexes.

const ATOMS = [
  'a', 'b', 'k', 's', 'x', 'z', 'A', 'K', 'S', '0', '1', '9', '.', '-', '_', ' ', '"', '\\.', '\\-', '\\\\', '\\d', '\\D', '\\w',
  '\\W', '\\s', '\\S', '\\pL', '\\PL', '\\p{Lu}', '\\pN', '\\C', '[a-z]', '[^.]', '[^a-z]', '[a-f0-9]', '[[:alpha:]]', '[[:^digit:]]',
  '[[:upper:]]', '[\\s\\S]', '[^\\n]', '[.]', '[]a]', '[^]]', '[-a]', '[a-]', '\\x41', '\\x{6B}', '\\x{212A}', '\u017F', '\u00e9',
  '\\Qa.\\E', '\\u0053', '\\cJ', '\\n', '\\t', '{', '}', '/', ':',
];
const ASSERTS = ['^', '$', '\\A', '\\z', '\\b', '\\B'];
const QUANTIFIERS = ['*', '+', '?', '*?', '+?', '??', '{2}', '{0}', '{1,3}', '{2,}', '{0,1}', '{3}?', '{,2}'];
/** RE2's repetition limit, just inside and outside; rare, since a large program costs milliseconds to compile and run. */
const HUGE_QUANTIFIERS = ['{1000}', '{1001}', '{2,1000}'];
const OPENERS = ['(', '(?:', '(?i:', '(?-i:', '(?s:', '(?m:', '(?U:', '(?P<g>', '(?<g>', '(?i)', '(?-i)'];

const regexGrammar = fc.letrec<{ piece: string; concat: string; alt: string; group: string }>((tie) => ({
  piece: fc.tuple(
    fc.oneof({ depthIdentifier: 'regex', maxDepth: 3 }, { weight: 6, arbitrary: fc.constantFrom(...ATOMS) },
      { weight: 1, arbitrary: fc.constantFrom(...ASSERTS) }, { weight: 2, arbitrary: tie('group') }),
    fc.oneof({ weight: 30, arbitrary: fc.constant('') }, { weight: 10, arbitrary: fc.constantFrom(...QUANTIFIERS) },
      { weight: 1, arbitrary: fc.constantFrom(...HUGE_QUANTIFIERS) }),
  ).map(([a, q]) => a + q),
  concat: fc.array(tie('piece'), { minLength: 0, maxLength: 4, depthIdentifier: 'regex' }).map((p) => p.join('')),
  alt: fc.array(tie('concat'), { minLength: 1, maxLength: 3, depthIdentifier: 'regex' }).map((a) => a.join('|')),
  group: fc.tuple(fc.constantFrom(...OPENERS), tie('alt')).map(([o, a]) => (o.endsWith(')') ? o + a : `${o}${a})`)),
})).alt;

/** Syntax soup: mostly invalid, which is the point. */
const regexSoup = fc.string({ unit: fc.constantFrom(...'()[]{}|*+?^$\\.-:,=!<>PQEpdswbBAzCx0129aiksmU '), maxLength: 14 });

/** A grammar pattern with one character inserted, deleted or replaced: near-valid patterns. */
const mutated = fc.tuple(regexGrammar, fc.nat(), fc.constantFrom('insert', 'delete', 'replace'),
  fc.constantFrom(...'()[]{}|*+?\\^$.-:')).map(([p, at, op, ch]) => {
  const i = p.length === 0 ? 0 : at % p.length;
  if (op === 'insert') return p.slice(0, i) + ch + p.slice(i);
  if (op === 'delete') return p.slice(0, i) + p.slice(i + 1);
  return p.slice(0, i) + ch + p.slice(i + 1);
});

const regexArb = fc.oneof(
  { weight: 24, arbitrary: regexGrammar },
  { weight: 8, arbitrary: mutated },
  { weight: 8, arbitrary: regexSoup },
  { weight: 4, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
  { weight: 1, arbitrary: fc.tuple(regexGrammar, fc.constantFrom(LIMITS.patternCharsMax - 1, LIMITS.patternCharsMax,
    LIMITS.patternCharsMax + 1)).map(([p, n]) => (p + 'a'.repeat(n)).slice(0, n)) },
);

function re2Accepts(source: string): boolean {
  try {
    new RE2('(?i)' + source);
    return true;
  } catch {
    return false;
  }
}

// ---------------------------------------------------------------------------
// Globs, and the reference translation of glob.ts's documented syntax.

const globChar = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...'abksxz09.-_*?') },
  { weight: 3, arbitrary: fc.constantFrom('[', ']', '!', '^', '\\', '[:digit:]', '[:alpha:]', '[:upper:]', '[:bogus:]', ':', '-') },
  { weight: 1, arbitrary: fc.constantFrom('A', 'K', 'S', '"', ' ', '\u017F', '\u212A', '\u00e9', '(', '|', '$', '{') },
);
const globArb = fc.oneof(
  { weight: 8, arbitrary: fc.string({ unit: globChar, maxLength: 14 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 8 }) },
);

const POSIX_JS: Record<string, string> = {
  alnum: '0-9A-Za-z', alpha: 'A-Za-z', ascii: '\\x00-\\x7F', blank: '\\t ', cntrl: '\\x00-\\x1F\\x7F', digit: '0-9', graph: '!-~',
  lower: 'a-z', print: ' -~', punct: '!-\\/:-@\\[-`{-~', space: '\\t\\n\\v\\f\\r ', upper: 'A-Z', word: '0-9A-Za-z_', xdigit: '0-9A-Fa-f',
};

/**
 * glob.ts's syntax, read from its module comment and implemented again
 * without looking at its code paths: `*` any run, `?` one character,
 * `[...]` sets (`!`/`^` negate, `]` first literal, ranges, `-` first or last
 * literal, POSIX classes), `\c` literal; anchored, case-insensitive. Errors:
 * unterminated `[`, unknown POSIX class, reversed range, trailing backslash.
 */
function referenceGlob(glob: string): RegExp | undefined {
  const cps = Array.from(glob);
  const n = cps.length;
  const lit = (c: string) => `\\u{${c.codePointAt(0)!.toString(16)}}`;
  /** The (possibly escaped) character at j: [character, next index], or undefined for a trailing backslash. */
  const readChar = (j: number): [string, number] | undefined => {
    if (cps[j] !== '\\') return [cps[j]!, j + 1];
    return j + 1 < n ? [cps[j + 1]!, j + 2] : undefined;
  };
  let src = '^';
  let i = 0;
  while (i < n) {
    const c = cps[i]!;
    if (c === '*') {
      src += '.*';
      i++;
    } else if (c === '?') {
      src += '.';
      i++;
    } else if (c === '[') {
      let j = i + 1;
      let set = '';
      if (cps[j] === '!' || cps[j] === '^') {
        set = '^';
        j++;
      }
      for (let first = true; ; first = false) {
        if (j >= n) return undefined;
        if (cps[j] === ']' && !first) break;
        if (cps[j] === '[' && cps[j + 1] === ':') {
          let close = -1;
          for (let k = j + 2; k + 1 < n; k++) {
            if (cps[k] === ':' && cps[k + 1] === ']') {
              close = k;
              break;
            }
          }
          if (close >= 0) {
            const cls = POSIX_JS[cps.slice(j + 2, close).join('')];
            if (cls === undefined) return undefined;
            set += cls;
            j = close + 2;
            continue;
          }
        }
        const lo = readChar(j);
        if (lo === undefined) return undefined;
        j = lo[1];
        if (cps[j] === '-' && j + 1 < n && cps[j + 1] !== ']') {
          const hi = readChar(j + 1);
          if (hi === undefined || hi[0].codePointAt(0)! < lo[0].codePointAt(0)!) return undefined;
          set += `${lit(lo[0])}-${lit(hi[0])}`;
          j = hi[1];
        } else set += lit(lo[0]);
      }
      src += `[${set}]`;
      i = j + 1;
    } else {
      const r = readChar(i);
      if (r === undefined) return undefined;
      src += lit(r[0]);
      i = r[1];
    }
  }
  // 'u' for code points and Unicode case folding (RE2's (?i) folds U+017F and U+212A into s and k too).
  return new RegExp(src + '$', 'iu');
}

// ---------------------------------------------------------------------------
// The matchers under test, as a worker runs them.

function blobHits(p: CompiledPattern, records: readonly string[], from: number, to: number): number[] {
  const view = makeView(records);
  const hits: number[] = [];
  const end = scanRecords(makeMatcher(p), view, from, to, (i) => { hits.push(i); return true; }, () => false);
  expect(end).toBe(to);
  return hits;
}

/**
 * Records for the trigram path, fixed for the run: building an index costs
 * about 2 ms (its count tables are sized for a shard), too much per case.
 */
const PLANNED_RECORDS = [...fc.sample(recordArb, { numRuns: 400, seed: FUZZ_SEED }), 'paypal-login.example.com.', 'KEY.example.',
  '"v=spf1 include:_spf.example.com ~all"', '10 mx.example.', 'kelvin.', 'xn--bcher-kva.example.'];
const PLANNED_VIEW = makeView(PLANNED_RECORDS);
const PLANNED_INDEX = buildTrigramIndex(PLANNED_VIEW);

/** The trigram path over PLANNED_RECORDS: candidates confirmed with recordMatches; undefined when it would scan. */
function plannedHits(p: CompiledPattern): number[] | undefined {
  const cand = candidates(PLANNED_INDEX, p.trigrams, PLANNED_RECORDS.length, PLANNED_RECORDS.length);
  if (cand === 'scan') return undefined;
  const re = makeMatcher(p);
  return Array.from(cand).filter((i) => recordMatches(re, PLANNED_VIEW, i));
}

function matching(records: readonly string[], reference: (record: string) => boolean): number[] {
  return records.map((r, i) => (reference(r) ? i : -1)).filter((i) => i >= 0);
}

function checkMatches(p: CompiledPattern, records: readonly string[], range: [number, number],
  reference: (record: string) => boolean): void {
  const want = matching(records, reference);
  const [a, b] = range;
  const from = Math.min(a % (records.length + 1), b % (records.length + 1));
  const to = Math.max(a % (records.length + 1), b % (records.length + 1));
  expect({ pattern: p.original, hits: blobHits(p, records, 0, records.length) }).toEqual({ pattern: p.original, hits: want });
  expect(blobHits(p, records, from, to)).toEqual(want.filter((i) => i >= from && i < to));
  const planned = plannedHits(p);
  if (planned !== undefined) {
    expect({ pattern: p.original, planned }).toEqual({ pattern: p.original, planned: matching(PLANNED_RECORDS, reference) });
  }
  if (p.everyRecord) expect(want.length).toBe(records.length);
}

function compileOutcome(method: 'regex' | 'glob', pattern: string): CompiledPattern | Error {
  try {
    return compilePattern(method, pattern);
  } catch (err) {
    expect((err as { code?: unknown }).code, `${method} ${JSON.stringify(pattern)}: ${String(err)}`).toBe('BAD_PATTERN');
    return err as Error;
  }
}

const rangeArb = fc.tuple(fc.nat(), fc.nat());

describe('fuzz: pattern compilation and the blob matcher', () => {
  test('regex: accepted exactly when RE2 accepts it; the blob scan matches what RE2 matches', () => {
    checkProperty('pattern regex', RUNS, fc.property(regexArb, recordsArb, rangeArb, (pattern, records, range) => {
      const p = compileOutcome('regex', pattern);
      const want = pattern.length <= LIMITS.patternCharsMax && re2Accepts(pattern);
      expect({ pattern, accepted: !(p instanceof Error) }).toEqual({ pattern, accepted: want });
      if (p instanceof Error) {
        const m = /^invalid regular expression at position (\d+): ./.exec(p.message);
        expect(m, p.message).not.toBeNull();
        expect(Number(m![1])).toBeLessThanOrEqual(pattern.length);
        return;
      }
      const re = new RE2('(?i)' + pattern);
      checkMatches(p, records, range, (r) => re.test(Buffer.from(r, 'latin1')));
    }));
  }, FUZZ_TIMEOUT_MS);

  test('glob: accepted exactly when the reference translation accepts it; matches agree with it', () => {
    checkProperty('pattern glob', RUNS, fc.property(globArb, recordsArb, rangeArb, (glob, records, range) => {
      const p = compileOutcome('glob', glob);
      const ref = referenceGlob(glob);
      expect({ glob, accepted: !(p instanceof Error) }).toEqual({ glob, accepted: ref !== undefined });
      if (p instanceof Error) {
        expect(p.message).toMatch(/^invalid glob at position \d+: ./);
        return;
      }
      checkMatches(p, records, range, (r) => ref!.test(r));
      // The record-level definition of a match agrees with the reference too.
      const rec = recordMatcher(p);
      expect(records.filter((r) => rec.test(Buffer.from(r, 'latin1')))).toEqual(records.filter((r) => ref!.test(r)));
    }));
  }, FUZZ_TIMEOUT_MS);
});
