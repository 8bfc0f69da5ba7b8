import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'manager',
    include: ['src/**/*.test.ts'],
    // One embedded PostgreSQL for the whole project; each test file gets its own database.
    globalSetup: ['src/test/global-setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
  },
});
