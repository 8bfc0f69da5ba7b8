import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'manager',
    include: ['src/**/*.test.ts'],
    // One embedded PostgreSQL for the whole project; each test file gets its own database.
    globalSetup: ['src/test/global-setup.ts'],
    // Upper bounds for a busy 2-core machine (load average 10+), not targets.
    testTimeout: 60_000,
    hookTimeout: 120_000,
  },
});
