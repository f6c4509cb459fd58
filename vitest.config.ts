// Unit and integration tiers (Node, real SQLite, real loopback HTTP). Benchmarks are scripts, not tests.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Timing tests measure real gaps: keep files from competing for the two cores too much.
    maxWorkers: 2,
  },
});
