import { defineConfig } from '@playwright/test';

/**
 * End-to-end: a real cluster (manager on embedded PostgreSQL + 3 agent processes) and a real
 * HTTP source, driven through the built console in Debian's headless Chromium. Never a
 * downloaded browser: `executablePath` is the system one (apt-get install chromium).
 */
export default defineConfig({
  testDir: 'tests',
  outputDir: 'test-results/artifacts',
  globalSetup: './global-setup.ts',
  fullyParallel: false,
  workers: 1,
  retries: 0,
  // Upper bounds for a busy 2-core CI machine (load average 10+), not targets: every wait ends
  // as soon as its condition holds.
  timeout: 180_000,
  expect: { timeout: 60_000 },
  reporter: process.env.CI ? 'list' : [['list']],
  use: {
    headless: true,
    viewport: { width: 1366, height: 800 },
    trace: 'retain-on-failure',
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--no-first-run',
      ],
    },
  },
});
