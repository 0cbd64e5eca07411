// A flexible search's patterns, compiled once by the search layer before
// any tier runs them: whether they compile (RE2's own words when not: the
// answer is an in-stream `failed`), and the trigram query every tier may use
// to skip what cannot match.

import { hasCode, STREAM_MESSAGES } from '../errors/catalogue.js';
import { ALL, type TrigramQuery } from '../model/trigram-query.js';
import type { FlexQuery } from '../query/flex-query.js';
import { compilePattern } from '../query/pattern.js';

/** What the front end learns from compiling a query's patterns once. */
export interface FlexPatterns {
  /** RE2's own words when the pattern or exclude does not compile (an in-stream `failed`). */
  error: string | undefined;
  /**
   * The pattern gives the trigram index something to work with. Such a
   * search is not split into ranges: each range's task would evaluate the
   * same posting lists again (the selective class cost a third more at 10 M
   * names when shards were split so).
   */
  indexable: boolean;
  /** The pattern's trigram query, for pruning shards that cannot match. */
  trigrams: TrigramQuery;
}

/** Compiles the pattern and exclude here, once; workers compile again (and cache) on their side. */
export function compileFlex(q: FlexQuery): FlexPatterns {
  try {
    const main = compilePattern(q.method, q.pattern);
    if (q.exclude !== undefined) compilePattern(q.method, q.exclude);
    return { error: undefined, indexable: main.trigrams.op !== 'all', trigrams: main.trigrams };
  } catch (err) {
    const msg = hasCode(err, 'BAD_PATTERN') ? (err as Error).message : STREAM_MESSAGES.INTERNAL;
    return { error: msg, indexable: false, trigrams: ALL };
  }
}
