import { defineConfig } from 'vitest/config';

// Integration tests start real server processes; two cores, so keep the
// number of test files running at once small and give them time.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
