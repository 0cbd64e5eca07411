// Glob patterns -> RE2 source.
//
// Semantics (issue 3, DNSDB's "full wildcard" search): the glob is matched
// against the whole record (anchored at both ends) and case-insensitively
// (pattern.ts adds the folding, as for regexes).
//   *          any run of characters, dots included (so `*.example.com.`
//              also matches `a.b.example.com.`)
//   ?          exactly one character
//   [...]      one character from the set; `[!...]` and `[^...]` negate;
//              `]` first in the set is literal; `a-z` ranges; `-` first or
//              last is literal; POSIX classes such as `[[:digit:]]`
//   \c         the character c, literally (inside brackets too)
//   anything else is literal.
// An unterminated `[`, an unknown POSIX class, a reversed range and a
// trailing backslash are errors (PatternError naming the 0-based position),
// rather than guesses.
//
// The output uses only `^ $ .* . [...]` and `\x{..}` escapes for every
// non-alphanumeric literal, so the binding's own translation of JavaScript
// syntax never changes it.

import { PatternError } from '../errors/catalogue.js';

const POSIX = new Set([
  'alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit',
]);

const isAlnum = (c: number) => (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);

function hexEscape(cp: number): string {
  return `\\x{${cp.toString(16).toUpperCase()}}`;
}

function fail(pos: number, reason: string): never {
  throw new PatternError(`invalid glob at position ${pos}: ${reason}`);
}

/** Translates a glob into an anchored RE2 pattern (no case folding added here). */
export function globToRegex(glob: string): string {
  let out = '^';
  let i = 0;
  const n = glob.length;
  // Reads one (possibly escaped) character at j: [code point, next index].
  const char = (j: number): [number, number] => {
    if (glob.charCodeAt(j) === 0x5c) {
      if (j + 1 >= n) fail(j, 'trailing backslash');
      const cp = glob.codePointAt(j + 1)!;
      return [cp, j + 1 + (cp > 0xffff ? 2 : 1)];
    }
    const cp = glob.codePointAt(j)!;
    return [cp, j + (cp > 0xffff ? 2 : 1)];
  };
  while (i < n) {
    const c = glob.charCodeAt(i);
    if (c === 0x2a) { // *
      if (!out.endsWith('.*')) out += '.*';
      i++;
    } else if (c === 0x3f) { // ?
      out += '.';
      i++;
    } else if (c === 0x5b) { // [
      const start = i;
      let j = i + 1;
      let cls = '[';
      if (j < n && (glob.charCodeAt(j) === 0x21 || glob.charCodeAt(j) === 0x5e)) { cls += '^'; j++; }
      let first = true;
      for (;;) {
        if (j >= n) fail(start, 'unterminated [');
        const d = glob.charCodeAt(j);
        if (d === 0x5d && !first) break;
        first = false;
        if (d === 0x5b && glob.charCodeAt(j + 1) === 0x3a) {
          const close = glob.indexOf(':]', j + 2);
          if (close >= 0) {
            const name = glob.slice(j + 2, close);
            if (!POSIX.has(name)) fail(j, `unknown character class [:${name}:]`);
            cls += `[:${name}:]`;
            j = close + 2;
            continue;
          }
        }
        const [lo, afterLo] = char(j);
        if (glob.charCodeAt(afterLo) === 0x2d && afterLo + 1 < n && glob.charCodeAt(afterLo + 1) !== 0x5d) {
          const [hi, afterHi] = char(afterLo + 1);
          if (hi < lo) fail(j, `invalid range ${glob.slice(j, afterHi)}`);
          cls += `${hexEscape(lo)}-${hexEscape(hi)}`;
          j = afterHi;
        } else {
          cls += hexEscape(lo);
          j = afterLo;
        }
      }
      out += cls + ']';
      i = j + 1;
    } else {
      const [cp, next] = char(i);
      out += isAlnum(cp) ? String.fromCharCode(cp) : hexEscape(cp);
      i = next;
    }
  }
  return out + '$';
}
