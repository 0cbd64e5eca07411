// Micro-benchmark: the flexible-search matcher without HTTP, workers or shards.
//
// Generates N DNS-like names (deterministic), joins them into one blob the
// way a shard stores them, builds the trigram index, then for the five query
// classes of issue 3 measures:
//   scan     one scanRecords() pass over the whole blob (GB/s, records/s);
//   trigram  candidates() + recordMatches() per candidate (ms), when the
//            query has a trigram plan within 5% of the records;
//   baseline one RE2 test() per record from JS (the slow way), and `rg -c -i`
//            over a newline file of the same names, both in the same run.
// Also prints the index build time and size per MB of blob, and compile time.
//
// Run: npx tsc -p tsconfig.json; node dist/bench/micro/pattern-scan.js [names=2000000] [--no-rg]

import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import RE2 from 're2';
import { LIMITS } from '../../src/config/limits.js';
import { compilePattern } from '../../src/query/pattern.js';
import { makeMatcher, recordMatches, scanRecords } from '../../src/search/local/blob-searcher.js';
import type { BlobColumns } from '../../src/shard/blob.js';
import { buildTrigramIndex, candidates } from '../../src/shard/trigram-index.js';
import { seededRandom } from '../../src/demo/prng.js';

const QUERIES: Array<[string, string]> = [
  ['selective', '^(.*\\.)?paypal[^.]*\\.com\\.$'],
  ['substring', 'paypal'],
  ['leading-wildcard', '.*-login\\..*'],
  ['class-heavy', '^[a-z0-9]{30,}\\.'],
  ['match-all', '.'],
];

const rng = seededRandom;

const SYLLABLES = ['ka', 'mo', 'ri', 'ten', 'shop', 'web', 'cdn', 'mail', 'net', 'app', 'lo', 'gin', 'sec', 'ure', 'pay',
  'bank', 'cloud', 'data', 'info', 'host', 'tra', 'vel', 'game', 'news', 'dev', 'api', 'img', 'static', 'media', 'edge'];
const TLDS = ['com', 'net', 'org', 'de', 'uk', 'ru', 'io', 'fr', 'jp', 'br', 'info', 'nl'];

/** Names averaging ~37 bytes (150 MB per 4 M names), with rare phishing-like and long-label names mixed in. */
function generateNames(count: number): string[] {
  const r = rng(2024);
  const names = new Set<string>();
  const label = () => {
    let s = '';
    const k = 1 + Math.floor(r() * 5);
    for (let i = 0; i < k; i++) s += SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    if (r() < 0.3) s += Math.floor(r() * 1000);
    if (r() < 0.1) s += '-' + SYLLABLES[Math.floor(r() * SYLLABLES.length)];
    return s;
  };
  const longLabel = () => Array.from({ length: 32 }, () => 'abcdefghijklmnopqrstuvwxyz0123456789'[Math.floor(r() * 36)]).join('');
  while (names.size < count) {
    const roll = r();
    let name: string;
    const depth = 2 + Math.floor(r() * 2);
    const parts: string[] = [];
    for (let i = 0; i < depth; i++) parts.push(label());
    if (roll < 0.00005) parts[parts.length - 1] = 'paypal' + (r() < 0.5 ? '-secure' + Math.floor(r() * 100) : '');
    else if (roll < 0.0001) parts[0] = 'www-paypal';
    else if (roll < 0.002) parts[0] = label() + '-login';
    else if (roll < 0.0022) parts[0] = longLabel();
    name = parts.join('.') + '.' + TLDS[Math.floor(r() * TLDS.length)] + '.';
    names.add(name);
  }
  return [...names].sort();
}

function makeView(names: readonly string[]): BlobColumns {
  let total = 0;
  for (const n of names) total += n.length + 1;
  const blob = Buffer.allocUnsafe(total);
  const offsets = new Uint32Array(names.length + 1);
  let at = 0;
  for (let i = 0; i < names.length; i++) {
    offsets[i] = at;
    at += blob.write(names[i]!, at, 'latin1');
    blob[at++] = 0x0a;
  }
  offsets[names.length] = at;
  return { blob, offsets };
}

/** Median of `runs` timings in ms. */
function time(runs: number, fn: () => void): number {
  const ts: number[] = [];
  for (let i = 0; i < runs; i++) {
    const t0 = performance.now();
    fn();
    ts.push(performance.now() - t0);
  }
  ts.sort((a, b) => a - b);
  return ts[Math.floor(ts.length / 2)]!;
}

function main(): void {
  const count = Number(process.argv.find((a) => /^\d+$/.test(a)) ?? 2_000_000);
  const useRg = !process.argv.includes('--no-rg');
  const require = createRequire(import.meta.url);
  const re2Version = (require('re2/package.json') as { version: string }).version;
  console.log(`# pattern-scan micro-benchmark: node ${path.relative(process.cwd(), process.argv[1] ?? '')} ` +
    `${process.argv.slice(2).join(' ')}`);
  console.log(`# node ${process.version}, re2 ${re2Version}, ${os.cpus()[0]?.model ?? 'cpu'} x${os.cpus().length}, ` +
    `scanChunkBytes ${LIMITS.scanChunkBytes}`);

  let t0 = performance.now();
  const names = generateNames(count);
  const view = makeView(names);
  const n = names.length;
  const mb = view.blob.length / 1e6;
  console.log(`# data: ${n} names, blob ${mb.toFixed(1)} MB (${(view.blob.length / n).toFixed(1)} bytes per name incl. \\n), ` +
    `generated in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  t0 = performance.now();
  const index = buildTrigramIndex(view);
  const buildMs = performance.now() - t0;
  const indexBytes = index.postings.length + index.keys.byteLength + index.starts.byteLength;
  // Working memory of the build: the index itself plus two 328,509-slot Uint32Arrays.
  console.log(`trigram index: build ${(buildMs / 1000).toFixed(2)} s (${(buildMs / mb).toFixed(1)} ms per MB of blob), ` +
    `${index.keys.length} keys, ${(indexBytes / 1e6).toFixed(1)} MB (${(indexBytes / view.blob.length).toFixed(2)} bytes per blob byte), ` +
    `build working memory ${((indexBytes + 328_509 * 8) / 1e6).toFixed(0)} MB`);

  let file = '';
  let dir = '';
  if (useRg) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'rrscan-bench-scan-'));
    file = path.join(dir, 'names.txt');
    writeFileSync(file, view.blob);
  }

  const budget = Math.floor(n * LIMITS.trigramCandidateFractionMax);
  console.log('class              matches   compile   scan ms   scan GB/s   scan Mrec/s   trigram ms (cands)   per-record ms   rg -c ms');
  for (const [name, pattern] of QUERIES) {
    let p = compilePattern('regex', pattern);
    const compileMs = time(5, () => { p = compilePattern('regex', pattern); });
    const re = makeMatcher(p);
    let matches = 0;
    const scanMs = time(3, () => {
      matches = 0;
      scanRecords(re, view, 0, n, () => { matches++; return true; }, () => false);
    });
    let trigram = 'no plan';
    const cand = candidates(index, p.trigrams, n, budget);
    if (cand !== 'scan') {
      let hits = 0;
      const ms = time(5, () => {
        const c = candidates(index, p.trigrams, n, budget) as Uint32Array;
        hits = 0;
        for (let k = 0; k < c.length; k++) if (recordMatches(re, view, c[k]!)) hits++;
      });
      if (hits !== matches) throw new Error(`${name}: trigram path found ${hits}, scan ${matches}`);
      trigram = `${ms.toFixed(2)} (${cand.length})`;
    }
    // Baseline 1: one RE2 call per record from JS.
    const ref = new RE2(p.recordSource);
    const sample = Math.min(n, 200_000);
    const perRecordMs = time(1, () => {
      for (let i = 0; i < sample; i++) ref.test(view.blob.subarray(view.offsets[i], view.offsets[i + 1]! - 1));
    }) * (n / sample);
    // Baseline 2: ripgrep over the same names.
    let rgMs = NaN;
    if (useRg) {
      try {
        rgMs = time(3, () => {
          const out = execFileSync('rg', ['--no-config', '-c', '-i', pattern, file], { encoding: 'latin1' }).trim();
          if (Number(out) !== matches) throw new Error(`${name}: rg counted ${out}, scan ${matches}`);
        });
      } catch (err) {
        if ((err as { status?: number }).status !== 1 || matches !== 0) throw err;
      }
    }
    console.log(`${name.padEnd(17)} ${String(matches).padStart(8)} ${compileMs.toFixed(2).padStart(7)}ms ` +
      `${scanMs.toFixed(1).padStart(9)} ` +
      `${(mb / 1000 / (scanMs / 1000)).toFixed(2).padStart(11)} ${(n / 1e6 / (scanMs / 1000)).toFixed(1).padStart(13)} ` +
      `${trigram.padStart(20)} ${perRecordMs.toFixed(0).padStart(15)} ${Number.isNaN(rgMs) ? '-' : rgMs.toFixed(1).padStart(10)}`);
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
}

main();
