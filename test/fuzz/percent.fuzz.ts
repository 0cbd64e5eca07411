// Fuzz target: percent-decoding (src/query/percent.ts, compat.md "Values").
//
// Properties:
// - decode(encode(x)) === x for every well-formed string x, whichever
//   characters are encoded and in whichever hex case;
// - decoding happens exactly once: decode(encode(encode(x))) === encode(x);
// - on arbitrary text, percentDecode agrees with decodeURIComponent (the
//   reference decoder of the platform): the same string when it decodes, and
//   undefined exactly when it throws, never an exception of its own; `+`
//   stays a plus;
// - parseQueryString gives back the parameters an encoder wrote (last value
//   wins), and undefined exactly when one escape is bad.

import fc from 'fast-check';
import { describe, expect, test } from 'vitest';
import { parseQueryString, percentDecode } from '../../src/query/percent.js';
import { checkProperty, FUZZ_TIMEOUT_MS, runsFor } from './fuzz-config.js';

const RUNS = runsFor(3_000);

/** Any string without lone surrogates: ASCII-heavy, with non-ASCII and astral characters mixed in. */
const text = fc.string({
  unit: fc.oneof(
    { weight: 3, arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
    { weight: 1, arbitrary: fc.constantFrom('%', '+', '/', '&', '=', '%2', '%25', '\u00e9', '\u{1F600}', '\uFFFD') },
  ),
  maxLength: 40,
});

/** Percent-encodes the UTF-8 bytes of the characters `pick` selects, in upper or lower hex. */
function encode(s: string, pick: (i: number) => boolean, lowerHex: boolean): string {
  let out = '';
  let i = 0;
  for (const ch of s) {
    // '%' must always be encoded, or the result would hold an escape that was never written.
    if (ch === '%' || pick(i++)) {
      for (const b of Buffer.from(ch, 'utf8')) {
        const hex = b.toString(16).padStart(2, '0');
        out += '%' + (lowerHex ? hex : hex.toUpperCase());
      }
    } else out += ch;
  }
  return out;
}

function reference(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

describe('fuzz: percent-decoding', () => {
  test('decode(encode(x)) === x, whatever is encoded', () => {
    checkProperty('percent round trip', RUNS, fc.property(text, fc.array(fc.boolean()), fc.boolean(), (s, picks, lower) => {
      const enc = encode(s, (i) => picks[i % Math.max(picks.length, 1)] ?? false, lower);
      expect(percentDecode(enc)).toBe(s);
      expect(percentDecode(encodeURIComponent(s))).toBe(s);
    }));
  }, FUZZ_TIMEOUT_MS);

  test('decodes exactly once', () => {
    checkProperty('percent decodes once', RUNS, fc.property(text, (s) => {
      const once = encodeURIComponent(s);
      expect(percentDecode(encodeURIComponent(once))).toBe(once);
    }));
  }, FUZZ_TIMEOUT_MS);

  test('agrees with decodeURIComponent on arbitrary text; bad escapes are undefined, never thrown', () => {
    const soup = fc.string({
      unit: fc.oneof(
        { weight: 2, arbitrary: fc.constantFrom('%', '%', 'a', 'F', '0', '8', 'c', '3', 'e', 'd', 'z', '+', '/', ' ', '\u00e9') },
        { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
        { weight: 1, arbitrary: fc.integer({ min: 0, max: 255 }).map((b) => '%' + b.toString(16).padStart(2, '0')) },
      ),
      maxLength: 30,
    });
    checkProperty('percent vs decodeURIComponent', RUNS, fc.property(soup, (s) => {
      expect(percentDecode(s)).toBe(reference(s));
    }));
  }, FUZZ_TIMEOUT_MS);

  test('parseQueryString reads back what an encoder wrote', () => {
    const params = fc.array(fc.tuple(text.filter((k) => k !== ''), text), { maxLength: 6 });
    checkProperty('query string round trip', RUNS, fc.property(params, fc.boolean(), (list, form) => {
      // Some clients form-encode (every reserved character escaped), some leave what they can raw.
      const enc = (s: string) => (form ? encodeURIComponent(s) : encode(s, (i) => i % 2 === 0, false).replace(/[&=]/g,
        (c) => encodeURIComponent(c)));
      const raw = list.map(([k, v]) => `${enc(k)}=${enc(v)}`).join('&');
      const want = new Map<string, string>();
      for (const [k, v] of list) want.set(k, v);
      expect(parseQueryString(raw)).toEqual(want);
      // One bad escape anywhere makes the whole query unparsable.
      expect(parseQueryString(raw + '&x=%G1')).toBeUndefined();
    }));
  }, FUZZ_TIMEOUT_MS);
});
