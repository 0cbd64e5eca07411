// `npm run bench`: every benchmark in sequence with modest defaults, each in
// its own process (so one's memory and threads do not disturb the next), its
// output printed as it comes and kept in bench/out/run-<time>.txt with a
// summary of exit codes and durations at the end.
//
//   npm run build && npm run bench [-- --only flex,lookup] [-- --skip ingest] [-- FLAGS...]
//
// Every other argument is passed to the benchmarks that take `--flag value`
// arguments, before their defaults: bench/common.ts arg() reads the first
// occurrence, so yours win, and each benchmark ignores flags it does not
// know (e.g. `-- --seconds 3 --data bench/out/flex-500000`). The micro
// benchmarks pattern-scan, quota and metrics-hot-path take positional
// arguments and get their defaults only.
//
// Order matters: flex builds bench/out/flex-2000000 (deterministic names),
// which lookup, shard-load and flex-load then read. flex needs ripgrep for
// its baseline; when it fails the others still run.

import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { OUT, environment, fmt } from './common.js';

interface Bench {
  name: string;
  /** Compiled script, relative to dist/bench. */
  script: string;
  defaults: string[];
  /** Takes `--flag value` arguments (bench/common.ts arg()); false for positional ones. */
  flags: boolean;
}

const FLEX_DATA = path.join(OUT, 'flex-2000000');

const BENCHES: Bench[] = [
  { name: 'flex', script: 'flex.js', defaults: ['--names', '2000000', '--runs', '15'], flags: true },
  { name: 'lookup', script: 'lookup.js', defaults: ['--data', FLEX_DATA, '--seconds', '5'], flags: true },
  { name: 'request-path', script: 'request-path.js', defaults: ['--data', FLEX_DATA, '--seconds', '5', '--rounds', '3'], flags: true },
  { name: 'front-ends', script: 'front-ends.js', defaults: ['--data', FLEX_DATA, '--seconds', '5'], flags: true },
  { name: 'metrics', script: 'metrics.js', defaults: ['--data', FLEX_DATA, '--seconds', '5', '--rounds', '3'], flags: true },
  { name: 'shard-load', script: 'shard-load.js', defaults: ['--data', FLEX_DATA], flags: true },
  { name: 'flex-load', script: 'flex-load.js', defaults: ['--data', FLEX_DATA, '--seconds', '5', '--slow-seconds', '15'], flags: true },
  { name: 'live-dnstap', script: 'live-dnstap.js', defaults: ['--frames', '200000'], flags: true },
  { name: 'live-query', script: 'live-query.js', defaults: ['--minutes', '60', '--runs', '200'], flags: true },
  { name: 'watch', script: 'watch.js', defaults: ['--watches', '1000', '--rate', '5000', '--seconds', '15', '--rounds', '2'], flags: true },
  { name: 'ingest', script: 'ingest.js', defaults: ['--ndjson-records', '500000'], flags: true },
  { name: 'pattern-scan', script: 'micro/pattern-scan.js', defaults: ['1000000'], flags: false },
  { name: 'quota', script: 'micro/quota.js', defaults: [], flags: false },
  { name: 'metrics-hot-path', script: 'micro/metrics-hot-path.js', defaults: [], flags: false },
  { name: 'watch-match', script: 'micro/watch-match.js', defaults: ['--watches', '0,1,100,1000'], flags: true },
];

/** Splits our own selection flags from the ones passed through. */
function parseArgs(argv: string[]): { only: Set<string> | undefined; skip: Set<string>; pass: string[] } {
  let only: Set<string> | undefined;
  const skip = new Set<string>();
  const pass: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if ((a === '--only' || a === '--skip') && argv[i + 1] !== undefined) {
      const names = argv[++i]!.split(',').map((s) => s.trim()).filter((s) => s !== '');
      for (const n of names) {
        if (!BENCHES.some((b) => b.name === n)) throw new Error(`unknown benchmark ${n}; known: ${BENCHES.map((b) => b.name).join(', ')}`);
      }
      if (a === '--only') only = new Set(names);
      else for (const n of names) skip.add(n);
    } else {
      pass.push(a);
    }
  }
  return { only, skip, pass };
}

const log: string[] = [];
const say = (s: string) => { console.log(s); log.push(s); };

function runOne(b: Bench, args: string[]): Promise<number> {
  const script = fileURLToPath(new URL(`./${b.script}`, import.meta.url));
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    child.stdout.on('data', (d: Buffer) => { process.stdout.write(d); log.push(d.toString().replace(/\n$/, '')); });
    child.stderr.on('data', (d: Buffer) => { process.stderr.write(d); log.push(d.toString().replace(/\n$/, '')); });
    child.on('error', (err) => { say(`cannot start ${script}: ${err.message}`); resolve(-1); });
    child.on('close', (code, signal) => resolve(code ?? (signal ? 128 : -1)));
  });
}

async function main(): Promise<void> {
  const { only, skip, pass } = parseArgs(process.argv.slice(2));
  const chosen = BENCHES.filter((b) => (only === undefined || only.has(b.name)) && !skip.has(b.name));
  say(`command: node dist/bench/run.js ${process.argv.slice(2).join(' ')}`.trimEnd());
  say(`env: ${environment()}`);
  say(`benchmarks: ${chosen.map((b) => b.name).join(', ')}`);
  const summary: string[] = [];
  for (const b of chosen) {
    const args = b.flags ? [...pass, ...b.defaults] : b.defaults;
    say('');
    say(`=== ${b.name}: node dist/bench/${b.script} ${args.join(' ')}`.trimEnd());
    const t0 = performance.now();
    const code = await runOne(b, args);
    const secs = (performance.now() - t0) / 1000;
    say(`=== ${b.name}: exit ${code} after ${fmt(secs)} s`);
    summary.push(`${b.name.padEnd(14)} ${(code === 0 ? 'ok' : `FAILED (exit ${code})`).padEnd(18)} ${fmt(secs).padStart(7)} s`);
  }
  say('');
  say('summary:');
  for (const line of summary) say(`  ${line}`);
  mkdirSync(OUT, { recursive: true });
  const file = path.join(OUT, `run-${new Date().toISOString().slice(0, 19)}.txt`);
  writeFileSync(file, log.join('\n') + '\n');
  say(`log: ${file}`);
  if (summary.some((l) => l.includes('FAILED'))) process.exitCode = 1;
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
