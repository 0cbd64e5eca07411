// RE2 regular-expression syntax: a parser into a small AST.
//
// Role. pattern.ts needs the structure of a user's regex twice: to rewrite it
// so a scan over the newline-joined blob can never match across records, and
// to extract a trigram query. No npm package parses RE2 syntax, so this file
// mirrors RE2's parser (vendor/re2/re2/parse.cc of the binding we ship) rule
// by rule: the same token boundaries, the same flag scoping, the same
// "this `{` is a literal" decisions. What it does NOT try to do is decide
// which characters an atom matches: every single-character construct (a
// literal, `.`, a class, `\d`, `\pL`, `[[:alpha:]]`, `\C`...) becomes an
// `atom` node carrying the RE2 source that denotes it, and pattern.ts asks
// RE2 itself which printable bytes that source matches. So a parser mistake
// can only misplace a boundary, and the equivalence fuzz test catches that.
//
// Contract.
// - Callers validate with RE2 first: parseRegex() is meant for patterns RE2
//   accepted. It still reports the errors it notices (unbalanced parens,
//   unterminated classes, bad escapes, misplaced or oversized repetitions,
//   bad `(?` groups) with their position, which is how a rejected pattern's
//   message gets a position; for anything else the caller falls back to
//   RE2's own error text.
// - It parses what RE2 receives: the user's pattern after the binding's own
//   rewrite (translateLikeBinding, binding-translation.ts).
// - Positions are 0-based UTF-16 offsets into the string given to the parser.

import { codePointAt, isDigit, isHex } from './regex-chars.js';

export interface ParseFlags {
  /** (?i) case folding. */
  readonly fold: boolean;
  /** (?m): ^ and $ match at line boundaries. */
  readonly multiLine: boolean;
  /** (?s): . matches \n. */
  readonly dotNl: boolean;
  /** (?U): repetitions are lazy by default. */
  readonly ungreedy: boolean;
}

export const DEFAULT_FLAGS: ParseFlags = Object.freeze({ fold: false, multiLine: false, dotNl: false, ungreedy: false });

export type Assertion = 'beginLine' | 'endLine' | 'beginText' | 'endText' | 'wordBoundary' | 'notWordBoundary';

export type RegexNode =
  | { readonly kind: 'empty'; readonly pos: number }
  /**
   * One character. `source` is RE2 syntax for exactly this character set when compiled on its own under
   * `fold`/`dotNl`; `literal` is the code point when the atom is a literal character.
   */
  | { readonly kind: 'atom'; readonly pos: number; readonly source: string; readonly fold: boolean; readonly dotNl: boolean;
    readonly literal?: number }
  | { readonly kind: 'assert'; readonly pos: number; readonly assertion: Assertion }
  | { readonly kind: 'concat'; readonly pos: number; readonly subs: readonly RegexNode[] }
  | { readonly kind: 'alternate'; readonly pos: number; readonly subs: readonly RegexNode[] }
  | { readonly kind: 'group'; readonly pos: number; readonly sub: RegexNode; readonly capture: boolean; readonly name?: string }
  /** `max` is -1 when unbounded. `counted` marks the {n,m} form (RE2 bounds only those). */
  | { readonly kind: 'repeat'; readonly pos: number; readonly sub: RegexNode; readonly min: number; readonly max: number;
    readonly greedy: boolean; readonly counted: boolean };

/** A syntax error the parser noticed, with the offending position. */
export class RegexSyntaxError extends Error {
  readonly pos: number;
  constructor(pos: number, message: string) {
    super(message);
    this.name = 'RegexSyntaxError';
    this.pos = pos;
  }
}

/** RE2's maximum_repeat_count: {n,m} bounds and their nested products. */
export const REPEAT_MAX = 1000;

const POSIX_CLASSES = new Set([
  'alnum', 'alpha', 'ascii', 'blank', 'cntrl', 'digit', 'graph', 'lower', 'print', 'punct', 'space', 'upper', 'word', 'xdigit',
]);

const isAlnum = (c: number) => isDigit(c) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a);
const hexValue = (c: number) => (c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10);
const RUNE_MAX = 0x10ffff;

/** RE2 source for one literal code point, immune to the binding's translation and to flags. */
export function literalSource(cp: number): string {
  return `\\x{${cp.toString(16).toUpperCase()}}`;
}

/** RE2's ParseInteger: no leading zeros, at most 9 digits; returns [value, end] or null. */
function parseInteger(s: string, i: number): [number, number] | null {
  if (i >= s.length || !isDigit(s.charCodeAt(i))) return null;
  if (i + 1 < s.length && s.charCodeAt(i) === 0x30 && isDigit(s.charCodeAt(i + 1))) return null;
  let v = 0;
  while (i < s.length && isDigit(s.charCodeAt(i))) {
    if (v >= 100_000_000) return null;
    v = v * 10 + s.charCodeAt(i) - 0x30;
    i++;
  }
  return [v, i];
}

/** RE2's MaybeParseRepetition: `{n}`, `{n,}`, `{n,m}`; null means `{` is a literal. */
function maybeRepetition(s: string, i: number): { min: number; max: number; end: number } | null {
  if (s.charCodeAt(i) !== 0x7b) return null;
  const lo = parseInteger(s, i + 1);
  if (!lo) return null;
  let j = lo[1];
  if (j >= s.length) return null;
  let max: number;
  if (s.charCodeAt(j) === 0x2c /* , */) {
    j++;
    if (j >= s.length) return null;
    if (s.charCodeAt(j) === 0x7d) max = -1;
    else {
      const hi = parseInteger(s, j);
      if (!hi) return null;
      max = hi[0];
      j = hi[1];
    }
  } else max = lo[0];
  if (j >= s.length || s.charCodeAt(j) !== 0x7d) return null;
  return { min: lo[0], max, end: j + 1 };
}

/** RE2's ParseEscape at s[i] === '\\': returns the code point and the end index. */
function parseEscape(s: string, i: number): [number, number] {
  if (i + 1 >= s.length) throw new RegexSyntaxError(i, 'trailing \\');
  const [c, w] = codePointAt(s, i + 1);
  let j = i + 1 + w;
  const bad = (): never => { throw new RegexSyntaxError(i, `invalid escape sequence: ${s.slice(i, j)}`); };
  if (c >= 0x31 && c <= 0x37) {
    // A single non-zero digit would be a backreference, which RE2 lacks.
    if (j >= s.length || s.charCodeAt(j) < 0x30 || s.charCodeAt(j) > 0x37) return bad();
  }
  if (c >= 0x30 && c <= 0x37) {
    let code = c - 0x30;
    for (let k = 0; k < 2 && j < s.length; k++) {
      const d = s.charCodeAt(j);
      if (d < 0x30 || d > 0x37) break;
      code = code * 8 + d - 0x30;
      j++;
    }
    return [code, j];
  }
  switch (c) {
    case 0x78: { // x
      if (j >= s.length) return bad();
      if (s.charCodeAt(j) === 0x7b) {
        j++;
        let code = 0;
        let digits = 0;
        while (j < s.length && isHex(s.charCodeAt(j))) {
          code = code * 16 + hexValue(s.charCodeAt(j));
          digits++;
          j++;
          if (code > RUNE_MAX) return bad();
        }
        if (j >= s.length || s.charCodeAt(j) !== 0x7d || digits === 0) return bad();
        return [code, j + 1];
      }
      if (j + 1 >= s.length) { j = s.length; return bad(); }
      const h1 = s.charCodeAt(j);
      const h2 = s.charCodeAt(j + 1);
      if (!isHex(h1) || !isHex(h2)) { j += 2; return bad(); }
      return [hexValue(h1) * 16 + hexValue(h2), j + 2];
    }
    case 0x6e: return [0x0a, j]; // n
    case 0x72: return [0x0d, j]; // r
    case 0x74: return [0x09, j]; // t
    case 0x61: return [0x07, j]; // a
    case 0x66: return [0x0c, j]; // f
    case 0x76: return [0x0b, j]; // v
    default:
      if (c < 0x80 && !isAlnum(c)) return [c, j];
      return bad();
  }
}

const PERL_CLASS = new Set([0x64, 0x44, 0x73, 0x53, 0x77, 0x57]); // d D s S w W

/**
 * Scans a `\p` / `\P` group at s[i] === '\\' (RE2's ParseUnicodeGroup) and
 * returns its end. The name is not checked here: RE2 already accepted it.
 */
function unicodeGroupEnd(s: string, i: number): number {
  if (i + 2 >= s.length) throw new RegexSyntaxError(i, `invalid character class range: ${s.slice(i)}`);
  if (s.charCodeAt(i + 2) !== 0x7b) return i + 2 + codePointAt(s, i + 2)[1];
  const close = s.indexOf('}', i + 3);
  if (close < 0) throw new RegexSyntaxError(i, `invalid character class range: ${s.slice(i)}`);
  return close + 1;
}

/** RE2's ParseCharClass at s[i] === '[': returns the index after the closing `]`. */
function charClassEnd(s: string, i: number): number {
  const start = i;
  i++;
  if (i < s.length && s.charCodeAt(i) === 0x5e /* ^ */) i++;
  let first = true;
  while (i < s.length && (s.charCodeAt(i) !== 0x5d || first)) {
    first = false;
    // [:alnum:] -- the closing :] is searched in the whole rest of the pattern, as RE2 does.
    if (i + 2 < s.length && s.charCodeAt(i) === 0x5b && s.charCodeAt(i + 1) === 0x3a) {
      const close = s.indexOf(':]', i + 2);
      if (close >= 0) {
        let name = s.slice(i + 2, close);
        if (name.startsWith('^')) name = name.slice(1);
        if (!POSIX_CLASSES.has(name)) throw new RegexSyntaxError(i, `invalid character class range: ${s.slice(i, close + 2)}`);
        i = close + 2;
        continue;
      }
    }
    if (i + 2 < s.length && s.charCodeAt(i) === 0x5c && (s.charCodeAt(i + 1) === 0x70 || s.charCodeAt(i + 1) === 0x50)) {
      i = unicodeGroupEnd(s, i);
      continue;
    }
    if (i + 1 < s.length && s.charCodeAt(i) === 0x5c && PERL_CLASS.has(s.charCodeAt(i + 1))) {
      i += 2;
      continue;
    }
    // A single character or a simple range.
    const rangeStart = i;
    let lo: number;
    [lo, i] = classChar(s, i, start);
    if (i + 1 < s.length && s.charCodeAt(i) === 0x2d && s.charCodeAt(i + 1) !== 0x5d) {
      let hi: number;
      [hi, i] = classChar(s, i + 1, start);
      if (hi < lo) throw new RegexSyntaxError(rangeStart, `invalid character class range: ${s.slice(rangeStart, i)}`);
    }
  }
  if (i >= s.length) throw new RegexSyntaxError(start, `missing ]: ${s.slice(start)}`);
  return i + 1;
}

function classChar(s: string, i: number, classStart: number): [number, number] {
  if (i >= s.length) throw new RegexSyntaxError(classStart, `missing ]: ${s.slice(classStart)}`);
  if (s.charCodeAt(i) === 0x5c) return parseEscape(s, i);
  const [c, w] = codePointAt(s, i);
  return [c, i + w];
}

/**
 * RE2's RepetitionWalker: the smallest quotient of REPEAT_MAX by the product
 * of {n,m} counts along any path; 0 means the nesting is too large.
 */
function repetitionBudget(node: RegexNode, arg: number): number {
  switch (node.kind) {
    case 'repeat': {
      let a = arg;
      if (node.counted) {
        const m = node.max < 0 ? node.min : node.max;
        if (m > 0) a = Math.floor(a / m);
      }
      return Math.min(a, repetitionBudget(node.sub, a));
    }
    case 'group':
      return repetitionBudget(node.sub, arg);
    case 'concat':
    case 'alternate': {
      let a = arg;
      for (const sub of node.subs) a = Math.min(a, repetitionBudget(sub, arg));
      return a;
    }
    case 'assert':
    case 'atom':
    case 'empty':
      return arg;
  }
}

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  parse(flags: ParseFlags): RegexNode {
    const node = this.alternation(flags, -1);
    if (this.i < this.s.length) throw new RegexSyntaxError(this.i, `unexpected ): ${this.s}`);
    return node;
  }

  /** Parses until an unmatched `)` (left in place) or the end. `open` is the position of the group's `(`, -1 at top level. */
  private alternation(flagsIn: ParseFlags, open: number): RegexNode {
    const s = this.s;
    let flags = flagsIn;
    const branches: RegexNode[] = [];
    let items: RegexNode[] = [];
    let branchPos = this.i;
    // Position of the previous token when it was a repetition operator (RE2's `lastunary`), else -1.
    let lastRepeat = -1;
    const endBranch = () => {
      branches.push(items.length === 1 ? items[0]! : items.length === 0 ? { kind: 'empty', pos: branchPos } :
        { kind: 'concat', pos: branchPos, subs: items });
    };
    const repeat = (pos: number, min: number, max: number, counted: boolean, opEnd: number) => {
      let end = opEnd;
      let lazy = false;
      if (end < s.length && s.charCodeAt(end) === 0x3f) { lazy = true; end++; }
      const opText = s.slice(pos, end);
      if (counted && ((max !== -1 && max < min) || min > REPEAT_MAX || max > REPEAT_MAX)) {
        throw new RegexSyntaxError(pos, `invalid repetition size: ${opText}`);
      }
      if (items.length === 0) throw new RegexSyntaxError(pos, `missing argument to repetition operator: ${opText}`);
      if (lastRepeat >= 0) throw new RegexSyntaxError(lastRepeat, `bad repetition operator: ${s.slice(lastRepeat, end)}`);
      const sub = items.pop()!;
      const node: RegexNode = { kind: 'repeat', pos, sub, min, max, greedy: lazy === flags.ungreedy, counted };
      if (counted && (min >= 2 || max >= 2) && repetitionBudget(node, REPEAT_MAX) === 0) {
        throw new RegexSyntaxError(pos, `invalid repetition size: ${opText}`);
      }
      items.push(node);
      this.i = end;
    };
    const atom = (pos: number, source: string, literal?: number) => {
      items.push(literal === undefined ? { kind: 'atom', pos, source, fold: flags.fold, dotNl: flags.dotNl } :
        { kind: 'atom', pos, source, fold: flags.fold, dotNl: flags.dotNl, literal });
    };
    const literal = (pos: number, cp: number) => atom(pos, literalSource(cp), cp);

    while (this.i < s.length) {
      const pos = this.i;
      const c = s.charCodeAt(pos);
      let wasRepeat = -1;
      switch (c) {
        case 0x7c: // |
          endBranch();
          items = [];
          this.i++;
          branchPos = this.i;
          break;
        case 0x29: // )
          if (open < 0) throw new RegexSyntaxError(pos, `unexpected ): ${s}`);
          endBranch();
          return branches.length === 1 ? branches[0]! : { kind: 'alternate', pos: open, subs: branches };
        case 0x28: { // (
          if (s.charCodeAt(pos + 1) === 0x3f) {
            const g = this.perlGroup(flags);
            if (g.setFlags) { flags = g.setFlags; break; }
            items.push(g.node!);
            break;
          }
          this.i++;
          const sub = this.alternation(flags, pos);
          this.close(pos);
          items.push({ kind: 'group', pos, sub, capture: true });
          break;
        }
        case 0x5e: // ^
          items.push({ kind: 'assert', pos, assertion: flags.multiLine ? 'beginLine' : 'beginText' });
          this.i++;
          break;
        case 0x24: // $
          items.push({ kind: 'assert', pos, assertion: flags.multiLine ? 'endLine' : 'endText' });
          this.i++;
          break;
        case 0x2e: // .
          atom(pos, '.');
          this.i++;
          break;
        case 0x5b: { // [
          const end = charClassEnd(s, pos);
          atom(pos, s.slice(pos, end));
          this.i = end;
          break;
        }
        case 0x2a: // *
          repeat(pos, 0, -1, false, pos + 1);
          wasRepeat = pos;
          break;
        case 0x2b: // +
          repeat(pos, 1, -1, false, pos + 1);
          wasRepeat = pos;
          break;
        case 0x3f: // ?
          repeat(pos, 0, 1, false, pos + 1);
          wasRepeat = pos;
          break;
        case 0x7b: { // {
          const r = maybeRepetition(s, pos);
          if (!r) {
            literal(pos, 0x7b);
            this.i++;
            break;
          }
          repeat(pos, r.min, r.max, true, r.end);
          wasRepeat = pos;
          break;
        }
        case 0x5c: // backslash
          this.escape(items, atom, literal);
          break;
        default: {
          const [cp, w] = codePointAt(s, pos);
          literal(pos, cp);
          this.i += w;
        }
      }
      lastRepeat = wasRepeat;
    }
    if (open >= 0) throw new RegexSyntaxError(open, `missing ): ${s}`);
    endBranch();
    return branches.length === 1 ? branches[0]! : { kind: 'alternate', pos: 0, subs: branches };
  }

  private close(open: number): void {
    if (this.i >= this.s.length || this.s.charCodeAt(this.i) !== 0x29) throw new RegexSyntaxError(open, `missing ): ${this.s}`);
    this.i++;
  }

  /** `(?...`: a named group, a flag group `(?i:...)`, or flag settings `(?i)` that last to the end of the enclosing group. */
  private perlGroup(flags: ParseFlags): { node?: RegexNode; setFlags?: ParseFlags } {
    const s = this.s;
    const pos = this.i;
    const c2 = s.charCodeAt(pos + 2);
    if ((pos + 3 < s.length && (c2 === 0x3d || c2 === 0x21)) ||
        (pos + 4 < s.length && c2 === 0x3c && (s.charCodeAt(pos + 3) === 0x3d || s.charCodeAt(pos + 3) === 0x21))) {
      throw new RegexSyntaxError(pos, `invalid perl operator: ${s.slice(pos, pos + (c2 === 0x3c ? 4 : 3))}`);
    }
    if ((pos + 4 < s.length && c2 === 0x50 && s.charCodeAt(pos + 3) === 0x3c) || (pos + 3 < s.length && c2 === 0x3c)) {
      const begin = pos + (c2 === 0x50 ? 4 : 3);
      const end = s.indexOf('>', begin);
      if (end < 0) throw new RegexSyntaxError(pos, `invalid named capture group: ${s.slice(pos)}`);
      const name = s.slice(begin, end);
      if (!isValidCaptureName(name)) throw new RegexSyntaxError(pos, `invalid named capture group: ${s.slice(pos, end + 1)}`);
      this.i = end + 1;
      const sub = this.alternation(flags, pos);
      this.close(pos);
      return { node: { kind: 'group', pos, sub, capture: true, name } };
    }
    let j = pos + 2;
    let negated = false;
    let sawFlag = false;
    let f = { ...flags };
    const bad = (): never => { throw new RegexSyntaxError(pos, `invalid perl operator: ${s.slice(pos, j)}`); };
    for (;;) {
      if (j >= s.length) return bad();
      const c = s.charCodeAt(j);
      j++;
      switch (c) {
        case 0x69: sawFlag = true; f = { ...f, fold: !negated }; break; // i
        case 0x6d: sawFlag = true; f = { ...f, multiLine: !negated }; break; // m
        case 0x73: sawFlag = true; f = { ...f, dotNl: !negated }; break; // s
        case 0x55: sawFlag = true; f = { ...f, ungreedy: !negated }; break; // U
        case 0x2d: // -
          if (negated) return bad();
          negated = true;
          sawFlag = false;
          break;
        case 0x3a: { // :
          if (negated && !sawFlag) return bad();
          this.i = j;
          const sub = this.alternation(f, pos);
          this.close(pos);
          return { node: { kind: 'group', pos, sub, capture: false } };
        }
        case 0x29: // )
          if (negated && !sawFlag) return bad();
          this.i = j;
          return { setFlags: f };
        default:
          if (c >= 0xd800 && c <= 0xdbff) j++;
          return bad();
      }
    }
  }

  private escape(items: RegexNode[], atom: (pos: number, source: string) => void,
    literal: (pos: number, cp: number) => void): void {
    const s = this.s;
    const pos = this.i;
    if (pos + 1 >= s.length) throw new RegexSyntaxError(pos, 'trailing \\');
    const c = s.charCodeAt(pos + 1);
    switch (c) {
      case 0x62: case 0x42: // \b \B
        items.push({ kind: 'assert', pos, assertion: c === 0x62 ? 'wordBoundary' : 'notWordBoundary' });
        this.i += 2;
        return;
      case 0x41: // \A
        items.push({ kind: 'assert', pos, assertion: 'beginText' });
        this.i += 2;
        return;
      case 0x7a: // \z
        items.push({ kind: 'assert', pos, assertion: 'endText' });
        this.i += 2;
        return;
      case 0x43: // \C: any byte
        atom(pos, '\\C');
        this.i += 2;
        return;
      case 0x51: { // \Q...\E: literal text
        let j = pos + 2;
        while (j < s.length) {
          if (j + 1 < s.length && s.charCodeAt(j) === 0x5c && s.charCodeAt(j + 1) === 0x45) { j += 2; break; }
          const [cp, w] = codePointAt(s, j);
          literal(j, cp);
          j += w;
        }
        this.i = j;
        return;
      }
      case 0x70: case 0x50: { // \p \P
        const end = unicodeGroupEnd(s, pos);
        atom(pos, s.slice(pos, end));
        this.i = end;
        return;
      }
      default:
        if (PERL_CLASS.has(c)) {
          atom(pos, s.slice(pos, pos + 2));
          this.i += 2;
          return;
        }
    }
    const [cp, end] = parseEscape(s, pos);
    literal(pos, cp);
    this.i = end;
  }
}

/** RE2's IsValidCaptureName: categories Lu Ll Lt Lm Lo Nl Mn Mc Nd Pc. */
function isValidCaptureName(name: string): boolean {
  // A fixed pattern of ours, not user input: V8's RegExp is fine here.
  return name.length > 0 && /^[\p{L}\p{Nl}\p{Mn}\p{Mc}\p{Nd}\p{Pc}]+$/u.test(name);
}

/** Parses RE2 syntax (after translateLikeBinding) into an AST. Throws RegexSyntaxError. */
export function parseRegex(text: string, flags: ParseFlags = DEFAULT_FLAGS): RegexNode {
  return new Parser(text).parse(flags);
}
