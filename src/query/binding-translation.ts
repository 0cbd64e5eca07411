// A port of the `re2` npm binding's own pattern translation
// (node_modules/re2/lib/pattern.cc translateRegExp).
//
// Why. The binding rewrites a pattern before RE2 sees it (JavaScript-isms
// such as `\u0041`, `\cA`, `(?<name>`, and `/` -> `\/`, applied even inside
// `\Q...\E`), so the RE2 parser (regex-syntax.ts) must read the rewritten
// text, and an error position in it must be mapped back to the user's
// pattern. translateLikeBinding() makes the same rewrite and keeps that map;
// `\p{...}` is left as written, because atoms are compiled through the
// binding again, which expands it identically.
//
// Positions are 0-based UTF-16 offsets.

import { codePointAt, isHex } from './regex-chars.js';

export interface Translated {
  /** What RE2 receives (modulo `\p{...}` expansion, see the module comment). */
  readonly text: string;
  /** origin[k] is the index in the user's pattern that text[k] came from; origin[text.length] = pattern.length. */
  readonly origin: Int32Array;
}

const isUpperAlpha = (c: number) => c >= 0x41 && c <= 0x5a;

/** The text the binding hands RE2 for `pattern`, and where each of its characters came from. */
export function translateLikeBinding(pattern: string): Translated {
  let out = '';
  const origin: number[] = [];
  const emit = (s: string, from: number) => {
    out += s;
    for (let k = 0; k < s.length; k++) origin.push(from);
  };
  // (The binding also tracks whether it is inside [...], naively; that only
  // steers how it expands binary \p{} properties, which we leave to it.)
  const n = pattern.length;
  let i = 0;
  while (i < n) {
    const ch = pattern.charCodeAt(i);
    if (ch === 0x5c /* \ */ && i + 1 < n) {
      const next = pattern.charCodeAt(i + 1);
      if (next === 0x5c) { emit('\\\\', i); i += 2; continue; }
      if (next === 0x63 /* c */) {
        if (i + 2 < n && isUpperAlpha(pattern.charCodeAt(i + 2))) {
          const v = pattern.charCodeAt(i + 2) - 0x40;
          emit('\\x' + v.toString(16).toUpperCase().padStart(2, '0'), i);
          i += 3;
          continue;
        }
        emit('\\c', i);
        i += 2;
        continue;
      }
      if (next === 0x75 /* u */) {
        if (i + 2 < n) {
          const c3 = pattern.charCodeAt(i + 2);
          if (isHex(c3)) {
            const start = i;
            let s = '\\x{' + pattern[i + 2];
            i += 3;
            for (let j = 0; j < 3 && i < n; i++, j++) {
              if (!isHex(pattern.charCodeAt(i))) break;
              s += pattern[i];
            }
            emit(s + '}', start);
            continue;
          }
          if (c3 === 0x7b /* { */) { emit('\\x', i); i += 2; continue; }
        }
        emit('\\u', i);
        i += 2;
        continue;
      }
      if ((next === 0x70 || next === 0x50) /* p P */ && i + 2 < n && pattern.charCodeAt(i + 2) === 0x7b) {
        const close = pattern.indexOf('}', i + 3);
        if (close >= 0) {
          // Kept verbatim; the binding expands or renames the property when
          // the atom is compiled, with the same result as in context.
          emit(pattern.slice(i, close + 1), i);
          i = close + 1;
          continue;
        }
      }
      const [, w] = codePointAt(pattern, i + 1);
      emit(pattern.slice(i, i + 1 + w), i);
      i += 1 + w;
      continue;
    }
    if (ch === 0x2f /* / */) { emit('\\/', i); i += 1; continue; }
    if (ch === 0x28 /* ( */ && i + 2 < n && pattern.charCodeAt(i + 1) === 0x3f && pattern.charCodeAt(i + 2) === 0x3c) {
      if (i + 3 >= n || (pattern.charCodeAt(i + 3) !== 0x3d && pattern.charCodeAt(i + 3) !== 0x21)) {
        emit('(?P<', i);
        i += 3;
        continue;
      }
    }
    const [, w] = codePointAt(pattern, i);
    emit(pattern.slice(i, i + w), i);
    i += w;
  }
  origin.push(n);
  return { text: out, origin: Int32Array.from(origin) };
}
