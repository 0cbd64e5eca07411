// Compiles a flexible-search pattern (regex or glob) into what a blob scan needs.
//
// Semantics (issue 3, decided here and relied on by the whole search path):
// - regex: RE2 syntax as the `re2` npm binding accepts it, unanchored,
//   matched against each whole record (an rrname with its trailing dot, or an
//   rdata presentation string; the record excludes its `\n`).
// - glob: see glob.ts; anchored at both ends.
// - Matching is CASE-INSENSITIVE by default for both, because DNS names
//   compare case-insensitively; a regex may opt out with `(?-i)` (or scope it:
//   `(?-i:ABC)`). Exactly: a record matches iff
//       new RE2('(?i)' + source).test(Buffer.from(record))
//   where source is the regex, or globToRegex(glob). `recordSource` holds
//   that string.
//
// The blob rewrite. A shard keeps all records of a column as ONE byte blob,
// each followed by `\n`, and a worker runs one RE2 search over it. A naive
// scan would let `[^x]*`, `\s`, `\W`, `(?s).`, `\n`... run across the
// separator, and `^`/`$`/`\A`/`\z` would only see the blob's ends. Records
// hold only bytes 0x20..0x7E (the shard writer asserts it), so:
// - every single-character atom (literal, `.`, class, `\d`, `\pL`, `\C`,
//   POSIX class, escape) is replaced by an explicit class of exactly the
//   printable bytes it matches under the flags active at that point. That
//   set is computed by asking RE2 itself (95 one-byte tests per distinct
//   atom, cached), so folding rules (`(?i)k` also matches U+212A, `(?i)ſ`
//   matches `s`) need no re-implementation. The class never contains `\n`;
//   an atom matching no printable byte becomes `[^\x00-\x{10FFFF}]`, which
//   matches nothing;
// - `^`, `\A` become `(?m:^)`; `$`, `\z` become `(?m:$)`; `\b`, `\B` stay
//   (the `\n` separator is a non-word character, like the edge of a text);
// - capture groups become non-capturing (RE2 then needs no submatch engine),
//   flag groups disappear (their effect is already in the classes), and
//   repetitions keep their bounds and (?U)-resolved greediness;
// - a leading `.*` / `^.*` and a trailing `.*` / `.*$` at the top level are
//   dropped: they cannot change whether a record matches, and without them
//   RE2 can skip ahead with memchr (see trimUnboundedEnds).
// Why this is exact: on a record the rewritten regex matches the same
// strings as the original, since each atom accepts the same bytes and each
// assertion sees the same context; on the blob no atom can consume `\n`, so
// every match lies inside one record, and the assertions at a record's edges
// see a `\n` (or the blob's edge), which they treat exactly as a text edge.
// The fuzz test in test/unit/query/pattern.test.ts checks it against the
// per-record reference.
//
// The result has no flags: `blobFlags` is '' and the RE2 must stay
// non-global (blob-searcher relies on search()/test() ignoring lastIndex).
//
// Validation order: the user's pattern is compiled by RE2 FIRST (its accept
// or reject decision and its error text are the truth), then translated as
// the binding translates it (binding-translation.ts) and parsed by
// regex-syntax.ts. A rejected pattern becomes a PatternError
// "invalid regular expression at position N: <RE2's message>" with N a
// 0-based UTF-16 offset into the pattern. A pattern RE2 accepted but our
// parser rejects is our bug, reported as "unsupported construct at
// position N" (none known; the fuzz test looks for them).
//
// Limits: LIMITS.patternCharsMax characters. The binding does not expose
// RE2's max_mem for a single regex; it uses RE2's default of 8 MiB, equal to
// LIMITS.re2MaxMemBytes (asserted below), and RE2 itself caps {n,m} at 1000
// and nested counted repetition at a product of 1000, so oversized programs
// fail to compile ("pattern too large") instead of eating memory.

import assert from 'node:assert/strict';
import RE2 from 're2';
import { LIMITS } from '../config/limits.js';
import { PatternError } from '../errors/catalogue.js';
import { globToRegex } from './glob.js';
import { translateLikeBinding } from './binding-translation.js';
import { parseRegex, RegexSyntaxError, type RegexNode } from './regex-syntax.js';
import type { TrigramQuery } from '../model/trigram-query.js';
import { trigramQuery } from './regex-trigrams.js';


export interface CompiledPattern {
  readonly method: 'regex' | 'glob';
  readonly original: string;
  /** RE2 source safe for the joined blob: no atom can match \n; ^/$/\A/\z are line anchors. */
  readonly blobSource: string;
  /** Flags for new RE2(blobSource, blobFlags): always ''. Folding is already in the classes. */
  readonly blobFlags: string;
  readonly trigrams: TrigramQuery;
  /** The per-record definition of a match: new RE2(recordSource).test(record). */
  readonly recordSource: string;
  /**
   * The pattern matches every record (records are never empty and never
   * hold a newline), so the scan need not ask RE2: `.` and `^.*$` style
   * "give me everything" queries are the most match-heavy there are, and one
   * RE2 search per record ran at about 2 us a match.
   */
  readonly everyRecord: boolean;
}

/** Sources (after glob translation) that match any non-empty record without a newline. */
const EVERY_RECORD = new Set(['.', '.*', '.+', '^', '$', '^.', '^.*', '^.+', '.$', '.*$', '.+$', '^.*$', '^.+$']);

/** RE2's default max_mem, which the binding uses for every single regex. */
const RE2_DEFAULT_MAX_MEM_BYTES = 8 << 20;
assert.equal(LIMITS.re2MaxMemBytes, RE2_DEFAULT_MAX_MEM_BYTES,
  'the re2 binding cannot set max_mem per regex; LIMITS.re2MaxMemBytes must equal its default');

export const FIRST_PRINTABLE = 0x20;
export const LAST_PRINTABLE = 0x7e;
/** Matches nothing: what an atom with no printable byte becomes. */
export const NEVER_CLASS = '[^\\x00-\\x{10FFFF}]';

// ---------------------------------------------------------------------------
// Atom byte sets, asked of RE2 and cached across patterns (the same few
// hundred atoms recur: letters, digits, `.`, `[^.]`, `\d`...).

const ONE_BYTE: Buffer[] = [];
for (let b = 0; b < 0x80; b++) ONE_BYTE.push(Buffer.of(b));

const atomCache = new Map<string, readonly number[]>();
/** Distinct atoms remembered; a pattern of 4096 distinct classes still fits in one generation. */
const ATOM_CACHE_MAX = 8192;

/** The printable bytes (0x20..0x7E) that `source` matches as one character under the given flags, ascending. */
export function atomBytes(source: string, fold: boolean, dotNl: boolean): readonly number[] {
  const key = `${fold ? 'i' : ''}${dotNl ? 's' : ''}:${source}`;
  let bytes = atomCache.get(key);
  if (bytes) return bytes;
  const re = new RE2(`\\A(?${fold ? 'i' : ''}${dotNl ? 's' : ''}:${source})\\z`);
  const out: number[] = [];
  for (let b = FIRST_PRINTABLE; b <= LAST_PRINTABLE; b++) if (re.test(ONE_BYTE[b]!)) out.push(b);
  bytes = Object.freeze(out);
  if (atomCache.size >= ATOM_CACHE_MAX) atomCache.clear();
  atomCache.set(key, bytes);
  return bytes;
}

/** Matches one character that folds to an ASCII letter: a-z, A-Z, U+017F (long s), U+212A (Kelvin sign). */
const FOLDS_TO_ASCII_LETTER = new RE2('\\A(?i:[a-z])\\z');

/**
 * atomBytes() for a literal code point, without compiling an RE2 per
 * distinct character (a 4096-character pattern of distinct CJK literals
 * would otherwise compile 4096 of them). Exact: printable ASCII matches
 * itself, plus its other case under folding (ASCII digits and punctuation
 * are uncased); other code points match no printable byte, except the few
 * that fold to an ASCII letter, which RE2 itself identifies.
 */
export function literalBytes(cp: number, fold: boolean): readonly number[] {
  if (cp >= FIRST_PRINTABLE && cp <= LAST_PRINTABLE) {
    const lower = cp | 0x20;
    if (fold && lower >= 0x61 && lower <= 0x7a) return [lower & ~0x20, lower];
    return [cp];
  }
  if (cp < 0x80 || !fold || cp > 0x10ffff) return [];
  if (!FOLDS_TO_ASCII_LETTER.test(Buffer.from(String.fromCodePoint(cp), 'utf8'))) return [];
  return atomBytes(`\\x{${cp.toString(16).toUpperCase()}}`, true, false);
}

const hex2 = (b: number) => b.toString(16).padStart(2, '0');

/** RE2 source of a class of exactly these bytes (ascending, printable). */
export function byteClass(bytes: readonly number[]): string {
  if (bytes.length === 0) return NEVER_CLASS;
  if (bytes.length === 1) return `\\x${hex2(bytes[0]!)}`;
  let s = '[';
  for (let k = 0; k < bytes.length;) {
    let j = k;
    while (j + 1 < bytes.length && bytes[j + 1] === bytes[j]! + 1) j++;
    s += j === k ? `\\x${hex2(bytes[k]!)}` : j === k + 1 ? `\\x${hex2(bytes[k]!)}\\x${hex2(bytes[j]!)}` :
      `\\x${hex2(bytes[k]!)}-\\x${hex2(bytes[j]!)}`;
    k = j + 1;
  }
  return s + ']';
}

// ---------------------------------------------------------------------------
// The rewrite.

type AtomNode = Extract<RegexNode, { kind: 'atom' }>;

const nodeBytes = (a: AtomNode): readonly number[] =>
  (a.literal !== undefined ? literalBytes(a.literal, a.fold) : atomBytes(a.source, a.fold, a.dotNl));

/** Whether emit(node) is one syntactic unit a repetition operator can follow directly. */
function selfDelimited(node: RegexNode): boolean {
  while (node.kind === 'group') node = node.sub;
  return node.kind === 'atom' || node.kind === 'alternate' || node.kind === 'empty' ||
    (node.kind === 'assert' && node.assertion !== 'wordBoundary' && node.assertion !== 'notWordBoundary');
}

function emit(node: RegexNode): string {
  switch (node.kind) {
    case 'empty':
      return '(?:)';
    case 'atom':
      return byteClass(nodeBytes(node));
    case 'assert':
      switch (node.assertion) {
        case 'beginLine': case 'beginText': return '(?m:^)';
        case 'endLine': case 'endText': return '(?m:$)';
        case 'wordBoundary': return '\\b';
        case 'notWordBoundary': return '\\B';
      }
      break;
    case 'concat': {
      let s = '';
      for (const sub of node.subs) s += emit(sub);
      return s;
    }
    case 'alternate':
      return `(?:${node.subs.map(emit).join('|')})`;
    case 'group':
      // Alternations wrap themselves and a repeated concat is wrapped below,
      // so a group needs no parentheses of its own.
      return emit(node.sub);
    case 'repeat': {
      const unit = selfDelimited(node.sub) ? emit(node.sub) : `(?:${emit(node.sub)})`;
      let op: string;
      if (node.counted) op = node.max === node.min ? `{${node.min}}` : node.max < 0 ? `{${node.min},}` : `{${node.min},${node.max}}`;
      else op = node.min === 0 ? (node.max === 1 ? '?' : '*') : '+';
      return unit + op + (node.greedy ? '' : '?');
    }
  }
  assert.fail(`unknown node ${(node as RegexNode).kind}`);
}

/** An atom (possibly grouped) matching every printable byte: `.`, `\C`, `[\s\S]`... */
function matchesAnyByte(node: RegexNode): boolean {
  while (node.kind === 'group') node = node.sub;
  return node.kind === 'atom' && nodeBytes(node).length === LAST_PRINTABLE - FIRST_PRINTABLE + 1;
}

/** `.*` or `.*?` of such an atom. */
function isAnyStar(node: RegexNode): boolean {
  while (node.kind === 'group') node = node.sub;
  return node.kind === 'repeat' && node.min === 0 && node.max < 0 && matchesAnyByte(node.sub);
}

const isLineStart = (n: RegexNode) => n.kind === 'assert' && (n.assertion === 'beginLine' || n.assertion === 'beginText');
const isLineEnd = (n: RegexNode) => n.kind === 'assert' && (n.assertion === 'endLine' || n.assertion === 'endText');

/**
 * Drops a leading `.*` (or `^.*`) and a trailing `.*` (or `.*$`) from the top
 * level. Whether a record matches is unchanged (within one record `.*` can
 * reach any position), but RE2 then sees a literal first byte and can use
 * memchr: `.*-login\..*` scans about 4x faster as `-login\.`. Only match
 * boundaries move, and a scan reports records, not boundaries.
 */
function trimUnboundedEnds(node: RegexNode): RegexNode {
  while (node.kind === 'group') node = node.sub;
  if (node.kind === 'alternate') return { ...node, subs: node.subs.map(trimUnboundedEnds) };
  const items = node.kind === 'concat' ? [...node.subs] : [node];
  for (;;) {
    if (items.length > 0 && isAnyStar(items[0]!)) items.shift();
    else if (items.length > 1 && isLineStart(items[0]!) && isAnyStar(items[1]!)) items.splice(0, 2);
    else if (items.length > 0 && isAnyStar(items[items.length - 1]!)) items.pop();
    else if (items.length > 1 && isLineEnd(items[items.length - 1]!) && isAnyStar(items[items.length - 2]!)) items.splice(-2, 2);
    else break;
  }
  if (items.length === 1) return items[0]!;
  if (items.length === 0) return { kind: 'empty', pos: node.pos };
  return { kind: 'concat', pos: node.pos, subs: items };
}

// ---------------------------------------------------------------------------
// Errors.

/** Where RE2's complaint about `pattern` points, as a 0-based offset into it. */
function errorPosition(pattern: string, re2Message: string): number {
  const tr = translateLikeBinding(pattern);
  try {
    parseRegex(tr.text, { fold: true, multiLine: false, dotNl: false, ungreedy: false });
  } catch (err) {
    if (err instanceof RegexSyntaxError) return tr.origin[err.pos]!;
    throw err;
  }
  // Our parser saw nothing wrong (an unknown \p{} name, a duplicate group
  // name...): RE2's message ends with the offending text; find it.
  const colon = re2Message.indexOf(': ');
  if (colon >= 0) {
    const at = tr.text.indexOf(re2Message.slice(colon + 2));
    if (at >= 0) return tr.origin[at]!;
  }
  return 0;
}

// ---------------------------------------------------------------------------

function compileSource(method: 'regex' | 'glob', original: string, source: string): CompiledPattern {
  const what = method === 'regex' ? 'regular expression' : 'glob';
  // 1. RE2 decides. The 'i' flag is the same switch as a '(?i)' prefix
  //    (RE2's FoldCase parse flag) but keeps '(?i)' out of RE2's messages.
  try {
    new RE2(source, 'i');
  } catch (err) {
    const msg = (err as Error).message;
    const pos = method === 'regex' ? errorPosition(source, msg) : 0;
    throw new PatternError(`invalid ${what} at position ${pos}: ${msg}`);
  }
  // 2. Our parse of what RE2 saw.
  const tr = translateLikeBinding(source);
  let ast: RegexNode;
  try {
    ast = parseRegex(tr.text, { fold: true, multiLine: false, dotNl: false, ungreedy: false });
  } catch (err) {
    if (!(err instanceof RegexSyntaxError)) throw err;
    throw new PatternError(`unsupported construct at position ${method === 'regex' ? tr.origin[err.pos] : 0}: ${err.message}`);
  }
  // 3. The blob rewrite, which RE2 must accept too.
  let blobSource: string;
  try {
    blobSource = emit(trimUnboundedEnds(ast));
  } catch (err) {
    throw new PatternError(`unsupported construct at position 0: ${(err as Error).message}`);
  }
  try {
    new RE2(blobSource);
  } catch (err) {
    throw new PatternError(`invalid ${what} at position 0: ${(err as Error).message}`);
  }
  return Object.freeze({
    method,
    original,
    blobSource,
    blobFlags: '',
    trigrams: trigramQuery(ast, nodeBytes),
    recordSource: '(?i)' + source,
    everyRecord: EVERY_RECORD.has(source),
  });
}

/** Compiles a regex or glob for the blob scan. Throws PatternError naming the offending position. */
export function compilePattern(method: 'regex' | 'glob', pattern: string): CompiledPattern {
  if (pattern.length > LIMITS.patternCharsMax) {
    throw new PatternError(`invalid ${method === 'regex' ? 'regular expression' : 'glob'} at position ${LIMITS.patternCharsMax}: ` +
      `pattern is longer than ${LIMITS.patternCharsMax} characters`);
  }
  return compileSource(method, pattern, method === 'regex' ? pattern : globToRegex(pattern));
}

/** The per-record reference matcher (tests, and the definition of a match). */
export function recordMatcher(p: CompiledPattern): RE2 {
  return new RE2(p.recordSource);
}
