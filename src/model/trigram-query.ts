// The trigram query: a boolean formula over trigrams that every record
// matching a pattern satisfies. query/regex-trigrams.ts derives it from a
// regex; the shard's trigram index (shard/trigram-index.ts) evaluates it to
// candidate records. A trigram is coded as (b0 << 16) | (b1 << 8) | b2 of
// lower-cased ASCII bytes, in both places.

export type TrigramQuery =
  | { readonly op: 'all' }
  | { readonly op: 'none' }
  | { readonly op: 'and' | 'or'; readonly trigrams: number[]; readonly subs: TrigramQuery[] };

export const ALL: TrigramQuery = Object.freeze({ op: 'all' });
export const NONE: TrigramQuery = Object.freeze({ op: 'none' });

export function trigramCode(a: number, b: number, c: number): number {
  return (a << 16) | (b << 8) | c;
}

export function trigramText(code: number): string {
  return String.fromCharCode((code >>> 16) & 0xff, (code >>> 8) & 0xff, code & 0xff);
}

/** Lower-cases an ASCII byte. */
export function lowerByte(b: number): number {
  return b >= 0x41 && b <= 0x5a ? b | 0x20 : b;
}

/** Evaluates q against the set of trigrams a text contains (tests and property checks). */
export function queryHolds(q: TrigramQuery, has: (code: number) => boolean): boolean {
  switch (q.op) {
    case 'all': return true;
    case 'none': return false;
    case 'and': return q.trigrams.every(has) && q.subs.every((s) => queryHolds(s, has));
    case 'or': return q.trigrams.some(has) || q.subs.some((s) => queryHolds(s, has));
  }
}

/** A readable form for tests and logs: `and(pay ayp)`, `or(...)`, `all`, `none`. */
export function formatQuery(q: TrigramQuery): string {
  if (q.op === 'all' || q.op === 'none') return q.op;
  const parts = [...q.trigrams.map(trigramText), ...q.subs.map(formatQuery)];
  return `${q.op}(${parts.join(' ')})`;
}
