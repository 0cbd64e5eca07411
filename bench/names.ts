// A deterministic set of N distinct, realistic owner names for the
// benchmarks: brandable words and syllables under a weighted TLD mix, common
// subdomain labels, long hash-like CDN hosts, and a thin sprinkle of
// phishing lookalikes, so that every benchmark query class finds something.
// Each name gets one A RRset. Built from the demo vocabulary (src/demo).

import type { Observation } from '../src/model/observation.js';
import { SUBDOMAINS, SYLLABLES, TLDS, WORDS, PHISH_BRANDS, PHISH_WORDS } from '../src/demo/vocabulary.js';
import { seededRandom } from '../src/demo/prng.js';

const rng = seededRandom;

const HEX = '0123456789abcdef';

export function* benchNames(count: number, seed = 7): Generator<string> {
  const r = rng(seed);
  const pick = <T>(a: readonly T[]): T => a[Math.floor(r() * a.length)]!;
  const tlds = TLDS.map((t) => t.suffix);
  const seen = new Set<string>();
  let made = 0;
  while (made < count) {
    const x = r();
    let base: string;
    if (x < 0.45) base = `${pick(WORDS)}${pick(WORDS)}`;
    else if (x < 0.75) base = `${pick(SYLLABLES)}${pick(SYLLABLES)}${pick(SYLLABLES)}`;
    else if (x < 0.9) base = `${pick(WORDS)}-${pick(WORDS)}${Math.floor(r() * 100)}`;
    else base = `${pick(SYLLABLES)}${pick(WORDS)}${Math.floor(r() * 1000)}`;
    let name = `${base}.${pick(tlds)}.`;
    const y = r();
    if (y < 0.35) name = `${pick(SUBDOMAINS)}.${name}`;
    else if (y < 0.40) {
      let h = '';
      const len = 20 + Math.floor(r() * 24);
      for (let i = 0; i < len; i++) h += HEX[Math.floor(r() * 16)];
      name = `${h}.cdn.${name}`;
    } else if (y < 0.4002) name = `${pick(PHISH_BRANDS)}-${pick(PHISH_WORDS)}.${name}`;
    else if (y < 0.4004) name = `${pick(PHISH_WORDS)}-${pick(PHISH_BRANDS)}${Math.floor(r() * 10)}.${pick(tlds)}.`;
    // Brand lookalikes directly under com., which the selective query class looks for.
    else if (y < 0.4005) name = `${pick(PHISH_BRANDS)}-${pick(PHISH_WORDS)}${Math.floor(r() * 100)}.com.`;
    if (seen.has(name)) continue;
    // Remember only a window: collisions are rare and a full Set of 10 M would dominate memory.
    if (seen.size > 2_000_000) seen.clear();
    seen.add(name);
    made++;
    yield name;
  }
}

export function* benchObservations(count: number, seed = 7): Generator<Observation> {
  let i = 0;
  for (const name of benchNames(count, seed)) {
    const ip = 0x0a000000 + ((i * 2654435761) >>> 8);
    const wire = Uint8Array.of(ip >>> 24, (ip >>> 16) & 255, (ip >>> 8) & 255, ip & 255);
    yield {
      rrname: name, rrtype: 1, bailiwick: name.slice(name.indexOf('.') + 1), count: 1 + (i % 17),
      rdata: [{ text: `${wire[0]}.${wire[1]}.${wire[2]}.${wire[3]}`, wire }],
      timeFirst: 1_300_000_000 + (i % 100_000_000), timeLast: 1_700_000_000 + (i % 60_000_000), zoneTimeFirst: 0, zoneTimeLast: 0,
    };
    i++;
  }
}
