import { defineConfig } from 'vitest/config';

// Integration tests start real server processes; two cores, so keep the
// number of test files running at once small and give them time.
export default defineConfig({
  test: {
    // Fuzz targets (test/fuzz/*.fuzz.ts) run at CI size with the rest; `npm run fuzz` runs them long.
    include: ['test/**/*.test.ts', 'test/fuzz/**/*.fuzz.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
