import { expect, test, type Page } from '@playwright/test';
import {
  adminApi,
  shot,
  startSettingsAgent,
  stopSettingsAgent,
  type Api,
  type SettingsAgent,
} from '../agent-process.js';

// Why is it slow? A donor watching this machine's real load, with its memory threshold lowered
// below what is really in use, throttles for a real reason: its settings page says why next to
// the throttled state, and the console's donor table shows the same reason the manager heard.
const MANAGER = process.env.FL_E2E_URL!;
const PASSWORD = process.env.FL_E2E_PASSWORD!;
/** A reason the governor gives for memory above the lowered threshold. */
const MEMORY_REASON = /memory \d\.\d\d > 0\.01/;

test.describe.configure({ mode: 'serial' });
let api: Api;
let agent: SettingsAgent;
let agentId: string;
let page: Page;

test.beforeAll(async ({ browser }) => {
  api = await adminApi();
  const { token } = await api<{ token: string }>('POST', '/tokens', {
    maxUses: 1,
    note: 'throttle reasons e2e',
  });
  agent = await startSettingsAgent({
    name: 'throttle-e2e',
    managerUrl: MANAGER,
    quota: '64MiB',
    // Machine load is what this spec is about: the agent watches the real one.
    env: { FREELOADER_JOIN_TOKEN: token, FREELOADER_IGNORE_LOAD: undefined },
  });
  await expect.poll(() => agent.agentId(), { timeout: 60_000 }).toBeTruthy();
  agentId = agent.agentId()!;
  page = await browser.newPage();
});

test.afterAll(async () => {
  await page?.close();
  // A throttled donor must not linger in the shared cluster: the helper revokes it.
  await stopSettingsAgent(agent, api);
});

test('the settings page says why the donor is throttled', async () => {
  await page.goto(agent.openUrl);
  await expect(page.getByRole('heading', { name: 'FreeLoader donor' })).toBeVisible();
  // Memory in use is always above 1 %: the governor sees real contention, nothing simulated.
  const base = agent.openUrl.replace(/#.*$/, '');
  const token = new URLSearchParams(new URL(agent.openUrl).hash.slice(1)).get('token');
  const res = await page.request.patch(`${base}api/settings`, {
    headers: { authorization: `Bearer ${token}` },
    data: { governor: { thresholds: { memory: 0.01 } } },
  });
  expect(res.status()).toBe(200);
  await expect(page.getByTestId('governor-state')).toHaveText('Throttled: this computer is busy', {
    timeout: 60_000,
  });
  await expect(page.getByLabel('Why')).toHaveText(MEMORY_REASON);
  await expect(page.getByLabel('Why')).not.toHaveText('—');
  await shot(page, 'throttle-01-settings-why');
});

test('the manager and the console donor table show the same reason', async () => {
  // Heartbeats carry the reasons (every 5 s).
  await expect
    .poll(
      async () => {
        const list = await api<Array<{ id: string; throttleReasons?: string[] }>>('GET', '/agents');
        return list.find((a) => a.id === agentId)?.throttleReasons?.join(', ') ?? '';
      },
      { timeout: 60_000 },
    )
    .toMatch(MEMORY_REASON);

  await page.goto(`${MANAGER}/login`);
  await page.getByLabel('User name').fill('admin');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Datasets' })).toBeVisible();
  await page.getByRole('link', { name: 'Donors' }).click();
  const row = page
    .getByRole('table', { name: 'donors' })
    .getByRole('row')
    .filter({ hasText: 'throttle-e2e' });
  const badge = row.getByTestId('throttle');
  // The console polls the donor list: allow it a few rounds.
  await expect(badge).toContainText('contended', { timeout: 60_000 });
  await expect(badge).toContainText(MEMORY_REASON);
  await expect(badge).toHaveAttribute(
    'aria-label',
    /^throttled: contended.*memory \d\.\d\d > 0\.01/,
  );
  await shot(page, 'throttle-02-console-donors');
});
