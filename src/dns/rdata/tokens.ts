// Master-file tokenizer: text -> words, for the rdata parsers and the zone
// file reader.
//
// Contract: tokenize() appends the words of `text` to a Tokens: whitespace
// separates; `;` starts a comment to the end of the line; `(` and `)` group
// lines and separate words; `"..."` is one word (marked quoted); a backslash
// escapes the next character everywhere. Escapes are kept in the words:
// names and character-strings interpret them. The parenthesis depth carries
// over between calls in a TokenizerState, so a record may span lines.
// Throws DnsFormatError for an unterminated quote or an unmatched `)`.

import { DnsFormatError } from '../../errors/catalogue.js';
import { printable } from '../name.js';

/**
 * The tokens of one record or rdata: raw text with escapes kept, and whether
 * each was quoted. One instance is reused across records, so `length` counts
 * the live entries.
 */
export class Tokens {
  readonly text: string[] = [];
  readonly quoted: boolean[] = [];
  length = 0;
  clear(): void {
    this.length = 0;
  }
  push(text: string, quoted: boolean): void {
    this.text[this.length] = text;
    this.quoted[this.length] = quoted;
    this.length++;
  }
}

export interface TokenizerState {
  /** Open parentheses; a record continues on the next line while this is above 0. */
  depth: number;
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0d || c === 0x0a;
}

/** Index of the `"` closing the quoted word that opens at i. */
function quotedEnd(text: string, i: number): number {
  let j = i + 1;
  for (;;) {
    if (j >= text.length) throw new DnsFormatError('unterminated quoted string');
    const d = text.charCodeAt(j);
    if (d === 0x5c) j += 2;
    else if (d === 0x22) return j;
    else j++;
  }
}

/** Index after the unquoted word that starts at i: it ends at a space, `;`, `(`, `)` or `"` that is not escaped. */
function wordEnd(text: string, i: number): number {
  const n = text.length;
  let j = i;
  while (j < n) {
    const d = text.charCodeAt(j);
    if (d === 0x5c) {
      j += 2;
      continue;
    }
    // Spelled out, not isSpace(): with the call, this loop (the zone reader's hottest) measured 15% slower.
    if (d === 0x20 || d === 0x09 || d === 0x0d || d === 0x0a || d === 0x3b || d === 0x28 || d === 0x29 || d === 0x22) break;
    j++;
  }
  return j > n ? n : j;
}

/** Splits master-file text into tokens appended to `out` (see the module comment). */
export function tokenize(text: string, out: Tokens, state: TokenizerState): void {
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (isSpace(c)) {
      i++;
    } else if (c === 0x3b /* ; */) {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return;
      i = nl + 1;
    } else if (c === 0x28 /* ( */) {
      state.depth++;
      i++;
    } else if (c === 0x29 /* ) */) {
      if (state.depth === 0) throw new DnsFormatError('")" without a matching "("');
      state.depth--;
      i++;
    } else if (c === 0x22 /* " */) {
      const j = quotedEnd(text, i);
      out.push(text.slice(i + 1, j), true);
      i = j + 1;
    } else {
      const j = wordEnd(text, i);
      out.push(text.slice(i, j), false);
      i = j;
    }
  }
}

/** The error for a quoted word where only an unquoted one may stand. */
export function unexpectedQuoted(word: string): DnsFormatError {
  return new DnsFormatError(`unexpected quoted string "${printable(word)}"`);
}

/** All words from i on, concatenated: hex and base64 may be split over several words. */
export function joinedRest(toks: Tokens, i: number): string {
  let s = '';
  for (; i < toks.length; i++) {
    if (toks.quoted[i]) throw unexpectedQuoted(toks.text[i]!);
    s += toks.text[i]!;
  }
  return s;
}
