// Unit and integration tiers (Node, real SQLite, real loopback HTTP). Benchmarks are scripts, not tests.
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // Timing tests measure real gaps at real servers, and many start several processes of their own
    // (a test site, redis-server, four slotscope processes, a Scrapy spider): one file at a time, so
    // they do not compete for the two cores (two at a time failed such tests in CI that pass alone).
    maxWorkers: 1,
  },
});
