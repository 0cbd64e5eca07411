// The watch benchmarks' patterns (bench/watch.ts, bench/micro/watch-match.ts):
// distinct regexes and globs over the words bench/names.ts makes names
// from, so that some of them match a feed of those names.
//
// simple: literals, anchors, classes, globs and alternations, the kinds of
// pattern analysts keep open; counted: every one with counted repetitions,
// the case that makes large RE2 sets thrash their DFA (limits.ts
// watchPatternsPerSet).

import { SYLLABLES, WORDS } from '../src/demo/vocabulary.js';

/** `n` distinct patterns over the bench names' vocabulary: literals, anchors, classes, globs, alternations. */
export function watchPatterns(n: number, kind: 'simple' | 'counted'): { method: 'regex' | 'glob'; pattern: string }[] {
  const out: { method: 'regex' | 'glob'; pattern: string }[] = [];
  const seen = new Set<string>();
  for (let k = 0; out.length < n; k++) {
    const w = WORDS[k % WORDS.length]!;
    const s = SYLLABLES[(k * 7) % SYLLABLES.length]!;
    const w2 = WORDS[(k * 13 + 5) % WORDS.length]!;
    let p: { method: 'regex' | 'glob'; pattern: string };
    if (kind === 'counted') {
      p = { method: 'regex', pattern: `${w}.{0,${5 + (k % 20)}}[0-9]{${1 + (k % 4)},}[a-z]{2,${3 + (k % 30)}}\\.` };
    } else {
      switch (k % 6) {
        case 0: p = { method: 'regex', pattern: `${w}${s}` }; break;
        case 1: p = { method: 'regex', pattern: `^${s}[a-z]*${w2}\\.` }; break;
        case 2: p = { method: 'glob', pattern: `*${w}-${w2}*` }; break;
        case 3: p = { method: 'regex', pattern: `(^|\\.)${w}[0-9]+\\.` }; break;
        case 4: p = { method: 'regex', pattern: `${s}${w2}.*\\.(net|org)\\.$` }; break;
        default: p = { method: 'regex', pattern: `^(www|mail|api)\\.${w}${w2}\\.` }; break;
      }
    }
    if (seen.has(p.pattern)) continue;
    seen.add(p.pattern);
    out.push(p);
  }
  return out;
}

