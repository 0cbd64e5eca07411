// Trigram query of a regex: a boolean formula over trigrams that every
// record matching the regex must satisfy, used to pick candidate records from
// a shard's trigram index before RE2 confirms them.
//
// This is Russ Cox's analysis ("Regular Expression Matching with a Trigram
// Index", and codesearch's index/regexp.go) ported faithfully: each node gets
// {canEmpty, exact, prefix, suffix, match}, concatenation crosses the sets,
// alternation unions them, and the sets are simplified by size (maxExact,
// maxSet) so they stay small. Anything it cannot reason about becomes `all`,
// which is never wrong, only slower.
//
// Differences from codesearch, all in the direction of safety:
// - Atoms arrive as the set of printable bytes each one matches (pattern.ts
//   asks RE2 for it), lower-cased, because the index is built over
//   lower-cased bytes. So case-insensitive matching, `(?-i)`, and non-ASCII
//   literals that fold to ASCII (U+212A KELVIN SIGN matches `k` under (?i))
//   are all handled by one rule; an atom matching no printable byte (`\n`,
//   `é`) is `none`.
// - `x{0}` is the empty string; other counted repetitions follow Cox (min 0
//   behaves like `x*`, min >= 1 like `x+`).
//
// A trigram is coded as (b0 << 16) | (b1 << 8) | b2 of lower-cased ASCII
// bytes; the same code the index uses.

import type { RegexNode } from './regex-syntax.js';
import { ALL, lowerByte, NONE, trigramCode, type TrigramQuery } from '../model/trigram-query.js';

/** Exact sets larger than this are folded into prefix/suffix (codesearch's maxExact). */
const EXACT_MAX = 7;
/** Prefix/suffix sets are trimmed until they hold at most this many strings (codesearch's maxSet). */
const SET_MAX = 20;
/** An atom matching more lower-cased bytes than this is treated as "any character". */
const CLASS_EXACT_MAX = 10;
/** A query naming more trigrams than this is replaced by `all` (sound; keeps plans cheap to evaluate). */
const QUERY_TRIGRAMS_MAX = 512;

// ---------------------------------------------------------------------------
// Query algebra (codesearch's Query.andOr with its implication and factoring rules).

function sortedUnion(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    if (j >= b.length || (i < a.length && a[i]! < b[j]!)) out.push(a[i++]!);
    else if (i >= a.length || b[j]! < a[i]!) out.push(b[j++]!);
    else { out.push(a[i++]!); j++; }
  }
  return out;
}

function isSubset(a: readonly number[], b: readonly number[]): boolean {
  let j = 0;
  for (const x of a) {
    while (j < b.length && b[j]! < x) j++;
    if (j >= b.length || b[j] !== x) return false;
    j++;
  }
  return true;
}

/** A node with nothing in it is `all` (and) or `none` (or); one sub and no trigrams is that sub. */
function make(op: 'and' | 'or', trigrams: number[], subs: TrigramQuery[]): TrigramQuery {
  if (trigrams.length === 0 && subs.length === 0) return op === 'and' ? ALL : NONE;
  if (trigrams.length === 0 && subs.length === 1) return subs[0]!;
  return { op, trigrams, subs };
}

function trigramsImply(t: readonly number[], q: TrigramQuery): boolean {
  switch (q.op) {
    case 'or':
      for (const s of q.subs) if (trigramsImply(t, s)) return true;
      for (const x of t) if (q.trigrams.includes(x)) return true;
      return false;
    case 'and':
      for (const s of q.subs) if (!trigramsImply(t, s)) return false;
      return isSubset(q.trigrams, t);
    case 'all':
      return true;
    case 'none':
      return false;
  }
}

/** Whether q implies r (conservative: false when unsure). */
function implies(q: TrigramQuery, r: TrigramQuery): boolean {
  if (q.op === 'none' || r.op === 'all') return true;
  if (q.op === 'all' || r.op === 'none') return false;
  if (q.op === 'and' || (q.trigrams.length === 1 && q.subs.length === 0)) return trigramsImply(q.trigrams, r);
  if (q.op === 'or' && r.op === 'or' && q.trigrams.length > 0 && q.subs.length === 0 && isSubset(q.trigrams, r.trigrams)) return true;
  return false;
}

function andOr(q: TrigramQuery, r: TrigramQuery, op: 'and' | 'or'): TrigramQuery {
  if (q.op === 'all') return op === 'or' ? q : r;
  if (q.op === 'none') return op === 'and' ? q : r;
  if (r.op === 'all') return op === 'or' ? r : q;
  if (r.op === 'none') return op === 'and' ? r : q;
  if (implies(q, r)) return op === 'and' ? q : r;
  if (implies(r, q)) return op === 'and' ? r : q;
  const qAtom = q.trigrams.length === 1 && q.subs.length === 0;
  const rAtom = r.trigrams.length === 1 && r.subs.length === 0;
  if (q.op === op && (r.op === op || rAtom)) return make(op, sortedUnion(q.trigrams, r.trigrams), [...q.subs, ...r.subs]);
  if (r.op === op && qAtom) return make(op, sortedUnion(q.trigrams, r.trigrams), [...r.subs]);
  if (qAtom && rAtom) return make(op, sortedUnion(q.trigrams, r.trigrams), []);
  if (q.op === op) return make(op, q.trigrams, [...q.subs, r]);
  if (r.op === op) return make(op, r.trigrams, [...r.subs, q]);
  // An AND of ORs or an OR of ANDs: factor out common trigrams,
  //   (abc|def|X) AND (abc|def|Y) => (abc|def) OR (X AND Y)
  //   (abc&def&X) OR (abc&def&Y)  => (abc&def) AND (X OR Y)
  const common = q.trigrams.filter((x) => r.trigrams.includes(x));
  if (common.length > 0) {
    const q2 = make(q.op, q.trigrams.filter((x) => !common.includes(x)), q.subs);
    const r2 = make(r.op, r.trigrams.filter((x) => !common.includes(x)), r.subs);
    const s = andOr(q2, r2, op);
    const other = op === 'and' ? 'or' : 'and';
    return andOr(make(other, common, []), s, other);
  }
  return make(op, [], [q, r]);
}

export const andQuery = (q: TrigramQuery, r: TrigramQuery): TrigramQuery => andOr(q, r, 'and');
export const orQuery = (q: TrigramQuery, r: TrigramQuery): TrigramQuery => andOr(q, r, 'or');

/** Number of trigrams named anywhere in q. */
export function queryTrigramCount(q: TrigramQuery): number {
  if (q.op === 'all' || q.op === 'none') return 0;
  let n = q.trigrams.length;
  for (const s of q.subs) n += queryTrigramCount(s);
  return n;
}

// ---------------------------------------------------------------------------
// String sets. Strings are lower-cased ASCII; `null` exact means "unknown".

type StringSet = string[];

const reversed = (s: string) => s.split('').reverse().join('');

/** Sorts and dedupes; suffix sets sort by reversed string so that shared suffixes are adjacent. */
function clean(s: StringSet, isSuffix: boolean): StringSet {
  const u = [...new Set(s)];
  if (isSuffix) u.sort((a, b) => { const ra = reversed(a); const rb = reversed(b); return ra < rb ? -1 : ra > rb ? 1 : 0; });
  else u.sort();
  return u;
}

function cross(s: StringSet, t: StringSet, isSuffix: boolean): StringSet {
  const out: string[] = [];
  for (const a of s) for (const b of t) out.push(a + b);
  return clean(out, isSuffix);
}

const union = (s: StringSet, t: StringSet, isSuffix: boolean): StringSet => clean([...s, ...t], isSuffix);

function minLen(s: StringSet): number {
  if (s.length === 0) return 0;
  let m = Infinity;
  for (const x of s) if (x.length < m) m = x.length;
  return m;
}

function trigramsOf(s: string): number[] {
  const out = new Set<number>();
  for (let i = 0; i + 3 <= s.length; i++) out.add(trigramCode(s.charCodeAt(i), s.charCodeAt(i + 1), s.charCodeAt(i + 2)));
  return [...out].sort((a, b) => a - b);
}

/**
 * An AND that already has this many terms (trigrams and sub-queries) is selective enough; more
 * conjuncts cost time (each AND merges and checks implication linearly, so a
 * 4096-literal pattern went quadratic) for nothing. Leaving conjuncts out is
 * always sound: the query only gets weaker.
 */
const AND_TRIGRAMS_ENOUGH = 64;

const enough = (q: TrigramQuery) => q.op === 'and' && q.trigrams.length + q.subs.length >= AND_TRIGRAMS_ENOUGH;

/** q AND (OR over the strings of t of AND of that string's trigrams); unchanged when some string is shorter than 3. */
function andTrigrams(q: TrigramQuery, t: StringSet): TrigramQuery {
  if (minLen(t) < 3 || enough(q)) return q;
  let or: TrigramQuery = NONE;
  for (const s of t) or = orQuery(or, make('and', trigramsOf(s), []));
  return andQuery(q, or);
}

// ---------------------------------------------------------------------------
// The analysis.

interface Info {
  canEmpty: boolean;
  exact: StringSet | null;
  prefix: StringSet;
  suffix: StringSet;
  match: TrigramQuery;
}

const anyMatch = (): Info => ({ canEmpty: true, exact: null, prefix: [''], suffix: [''], match: ALL });
const anyChar = (): Info => ({ canEmpty: false, exact: null, prefix: [''], suffix: [''], match: ALL });
const noMatch = (): Info => ({ canEmpty: false, exact: null, prefix: [], suffix: [], match: NONE });
const emptyString = (): Info => ({ canEmpty: true, exact: [''], prefix: [], suffix: [], match: ALL });

function addExact(info: Info): void {
  if (info.exact) info.match = andTrigrams(info.match, info.exact);
}

function simplifySet(info: Info, which: 'prefix' | 'suffix'): void {
  const isSuffix = which === 'suffix';
  let t = clean(info[which], isSuffix);
  // Add the OR of the current set to the query.
  info.match = andTrigrams(info.match, t);
  // Then cut the strings down to length 2 (and further while the set is too big).
  for (let n = 3; n === 3 || t.length > SET_MAX; n--) {
    const w: string[] = [];
    for (let str of t) {
      if (str.length >= n) str = isSuffix ? str.slice(str.length - n + 1) : str.slice(0, n - 1);
      if (w.length === 0 || w[w.length - 1] !== str) w.push(str);
    }
    t = clean(w, isSuffix);
  }
  // Drop strings made redundant by a shorter one ("ab" makes "abc" useless as a prefix).
  const out: string[] = [];
  for (const str of t) {
    const last = out[out.length - 1];
    if (last === undefined || !(isSuffix ? str.endsWith(last) : str.startsWith(last))) out.push(str);
  }
  info[which] = out;
}

function simplify(info: Info, force: boolean): void {
  if (info.exact) info.exact = clean(info.exact, false);
  if (info.exact && (info.exact.length > EXACT_MAX || (minLen(info.exact) >= 3 && force) || minLen(info.exact) >= 4)) {
    addExact(info);
    // Fresh arrays: prefix/suffix sets may be shared with the infos they came from.
    const prefix = [...info.prefix];
    const suffix = [...info.suffix];
    for (const s of info.exact) {
      prefix.push(s.length < 3 ? s : s.slice(0, 2));
      suffix.push(s.length < 3 ? s : s.slice(s.length - 2));
    }
    info.prefix = prefix;
    info.suffix = suffix;
    info.exact = null;
  }
  if (!info.exact) {
    simplifySet(info, 'prefix');
    simplifySet(info, 'suffix');
  }
}

function concat(x: Info, y: Info): Info {
  const xy: Info = { canEmpty: x.canEmpty && y.canEmpty, exact: null, prefix: [], suffix: [],
    match: enough(x.match) ? x.match : andQuery(x.match, y.match) };
  if (x.exact && y.exact) {
    xy.exact = cross(x.exact, y.exact, false);
  } else {
    if (x.exact) xy.prefix = cross(x.exact, y.prefix, false);
    else {
      xy.prefix = x.prefix;
      if (x.canEmpty) xy.prefix = union(xy.prefix, y.prefix, false);
    }
    if (y.exact) xy.suffix = cross(x.suffix, y.exact, true);
    else {
      xy.suffix = y.suffix;
      if (y.canEmpty) xy.suffix = union(xy.suffix, x.suffix, true);
    }
  }
  // If every string of x.suffix x y.prefix is long enough, one of its
  // trigrams must be present; the prefix/suffix sets alone would miss it.
  if (!x.exact && !y.exact && x.suffix.length <= SET_MAX && y.prefix.length <= SET_MAX &&
      minLen(x.suffix) + minLen(y.prefix) >= 3) {
    xy.match = andTrigrams(xy.match, cross(x.suffix, y.prefix, false));
  }
  simplify(xy, false);
  return xy;
}

function alternate(x: Info, y: Info): Info {
  const xy: Info = { canEmpty: x.canEmpty || y.canEmpty, exact: null, prefix: [], suffix: [], match: ALL };
  if (x.exact && y.exact) {
    xy.exact = union(x.exact, y.exact, false);
  } else if (x.exact) {
    xy.prefix = union(x.exact, y.prefix, false);
    xy.suffix = union(x.exact, y.suffix, true);
    addExact(x);
  } else if (y.exact) {
    xy.prefix = union(x.prefix, y.exact, false);
    xy.suffix = union(x.suffix, y.exact, true);
    addExact(y);
  } else {
    xy.prefix = union(x.prefix, y.prefix, false);
    xy.suffix = union(x.suffix, y.suffix, true);
  }
  xy.match = orQuery(x.match, y.match);
  simplify(xy, false);
  return xy;
}

/** The printable bytes an atom matches; supplied by pattern.ts (which asks RE2). */
export type AtomBytes = (atom: Extract<RegexNode, { kind: 'atom' }>) => readonly number[];

function analyze(node: RegexNode, bytes: AtomBytes): Info {
  switch (node.kind) {
    case 'empty':
    case 'assert':
      return emptyString();
    case 'atom': {
      const lowered = [...new Set(bytes(node).map(lowerByte))];
      if (lowered.length === 0) return noMatch();
      if (lowered.length > CLASS_EXACT_MAX) return anyChar();
      const info: Info = { canEmpty: false, exact: lowered.map((b) => String.fromCharCode(b)), prefix: [], suffix: [], match: ALL };
      simplify(info, false);
      return info;
    }
    case 'group':
      return analyze(node.sub, bytes);
    case 'concat': {
      let info = emptyString();
      for (const s of node.subs) info = concat(info, analyze(s, bytes));
      return info;
    }
    case 'alternate': {
      let info = noMatch();
      for (const s of node.subs) info = alternate(info, analyze(s, bytes));
      return info;
    }
    case 'repeat': {
      if (node.max === 0) return emptyString();
      if (node.min === 0) {
        if (node.max === 1) return alternate(analyze(node.sub, bytes), emptyString());
        return anyMatch();
      }
      // x+ (and x{n,m}, n >= 1): prefixes and suffixes survive, exactness does not.
      const info = analyze(node.sub, bytes);
      if (info.exact) {
        info.prefix = info.exact;
        info.suffix = clean(info.exact, true);
        info.exact = null;
      }
      simplify(info, false);
      return info;
    }
  }
}

/** The trigram query every record matching `root` satisfies. */
export function trigramQuery(root: RegexNode, bytes: AtomBytes): TrigramQuery {
  const info = analyze(root, bytes);
  simplify(info, true);
  addExact(info);
  return queryTrigramCount(info.match) > QUERY_TRIGRAMS_MAX ? ALL : info.match;
}
