import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    projects: ['packages/*', 'services/*', 'apps/agent', 'apps/console', 'scripts', 'bench'],
  },
});
