import { defineConfig } from 'vitest/config';

// The fuzz targets' seed (test/fuzz/fuzz-config.ts) is fixed here, once, before the workers start. `npm test`
// uses one fixed seed, so CI judges the same cases every day; a long run (`npm run fuzz`, RRSCAN_FUZZ_RUNS set)
// takes the UTC date, so each day's long run explores new cases. RRSCAN_FUZZ_SEED repeats any run.
const today = new Date();
const FUZZ_SEED = process.env['RRSCAN_FUZZ_SEED'] || (process.env['RRSCAN_FUZZ_RUNS'] === undefined ? '20261125'
  : String(today.getUTCFullYear() * 10_000 + (today.getUTCMonth() + 1) * 100 + today.getUTCDate()));

// Integration tests start real server processes; two cores, so keep the
// number of test files running at once small and give them time.
export default defineConfig({
  test: {
    // Fuzz targets (test/fuzz/*.fuzz.ts) run at CI size with the rest; `npm run fuzz` runs them long.
    include: ['test/**/*.test.ts', 'test/fuzz/**/*.fuzz.ts'],
    env: { RRSCAN_FUZZ_SEED: FUZZ_SEED },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
