// Run settings shared by the fuzz targets (test/fuzz/*.fuzz.ts).
//
// Case counts. Each target names a CI-sized count, small enough that all
// targets together add well under a minute to `npm test`.
// RRSCAN_FUZZ_RUNS=N replaces every target's count (`npm run fuzz` sets it to
// 100,000); a target that cannot reach N in reasonable time (the HTTP one)
// caps it and says so in its log line.
//
// Seeds. One seed per run, shared by every target: RRSCAN_FUZZ_SEED when set,
// else derived from the UTC date, so a day's runs explore the same cases on
// every machine and the next day explores new ones (vitest.config.ts fixes it
// once per run, so a run crossing midnight keeps one seed). Each target logs the seed;
// a failure is repeated with RRSCAN_FUZZ_SEED=<seed> (fast-check's report also
// gives the seed and the shrink path of the counterexample).

import fc from 'fast-check';

const RUNS_ENV = process.env['RRSCAN_FUZZ_RUNS'];
const SEED_ENV = process.env['RRSCAN_FUZZ_SEED'];

/** True for a long run (`npm run fuzz`): RRSCAN_FUZZ_RUNS was given. */
export const LONG_RUN = RUNS_ENV !== undefined && RUNS_ENV !== '';

function dateSeed(): number {
  const d = new Date();
  return d.getUTCFullYear() * 10_000 + (d.getUTCMonth() + 1) * 100 + d.getUTCDate();
}

function parseSeed(text: string | undefined): number {
  if (text === undefined || text === '') return dateSeed();
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new Error(`RRSCAN_FUZZ_SEED must be an integer, not ${JSON.stringify(text)}`);
  return n | 0;
}

export const FUZZ_SEED = parseSeed(SEED_ENV);

/** The number of cases a target runs: RRSCAN_FUZZ_RUNS when given, else its CI-sized count. */
export function runsFor(ciRuns: number): number {
  if (!LONG_RUN) return ciRuns;
  const n = Number(RUNS_ENV);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`RRSCAN_FUZZ_RUNS must be a positive integer, not ${JSON.stringify(RUNS_ENV)}`);
  return n;
}

/** vitest's time limit for one target: a minute at CI size, unlimited in practice for a long run. */
export const FUZZ_TIMEOUT_MS = LONG_RUN ? 6 * 3_600_000 : 60_000;

function report(target: string, runs: number, ms: number, note: string): void {
  const rate = Math.round(runs / Math.max(ms / 1000, 1e-3));
  console.log(`[fuzz] ${target}: ${runs} cases in ${(ms / 1000).toFixed(1)} s (${rate}/s), seed ${FUZZ_SEED}${note ? `; ${note}` : ''}`);
}

/** Runs a synchronous property for `runs` cases with the run's seed and logs the count and time. */
export function checkProperty<Ts extends [unknown, ...unknown[]]>(target: string, runs: number, prop: fc.IProperty<Ts>,
  note = ''): void {
  const t0 = performance.now();
  fc.assert(prop, { numRuns: runs, seed: FUZZ_SEED });
  report(target, runs, performance.now() - t0, note);
}

/** checkProperty for an asynchronous property; `timeoutMs` bounds one case (a hang fails the case). */
export async function checkAsyncProperty<Ts extends [unknown, ...unknown[]]>(target: string, runs: number,
  prop: fc.IAsyncProperty<Ts>, timeoutMs: number, note = ''): Promise<void> {
  const t0 = performance.now();
  await fc.assert(prop, { numRuns: runs, seed: FUZZ_SEED, timeout: timeoutMs });
  report(target, runs, performance.now() - t0, note);
}
