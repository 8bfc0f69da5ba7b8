import { defineProject } from 'vitest/config';

export default defineProject({
  test: {
    name: 'striping',
    include: ['src/**/*.test.ts'],
    // Upper bounds, not targets: a busy 2-core CI machine (load 10+) runs 5 s tests in 10+ s.
    testTimeout: 60_000,
  },
});
