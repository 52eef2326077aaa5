import { defineConfig } from 'vitest/config';

// End-to-end tests start real servers and child processes; two cores, so keep the pool small
// and the timeouts generous instead of racing the machine.
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
