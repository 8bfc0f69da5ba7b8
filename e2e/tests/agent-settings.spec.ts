import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, test, type Page } from '@playwright/test';
import {
  adminApi,
  shot as screenshot,
  startSettingsAgent,
  stopSettingsAgent,
  type Api,
  type SettingsAgent,
} from '../agent-process.js';

// The donor's own settings page, served by `freeloader agent` on 127.0.0.1 behind its local
// token, driven in Chromium: sign in by the printed link, change the donated space, pause and
// resume, set the bandwidth caps, and watch the state follow (and the manager hear of it).
const MANAGER = process.env.FL_E2E_URL!;
const MiB = 1048576;

test.describe.configure({ mode: 'serial' });
let page: Page;
let api: Api;
let agent: SettingsAgent;
let agentId: string;
let dir: string;
let openUrl: string;

const shot = (name: string): Promise<void> => screenshot(page, name);

/** The manager's view of our donor, polled until `ok` holds. */
async function managerSees(ok: (a: Record<string, unknown>) => boolean): Promise<void> {
  await expect
    .poll(async () => {
      const list = await api<Array<Record<string, unknown>>>('GET', '/agents');
      return ok(list.find((a) => a.id === agentId) ?? {});
    })
    .toBe(true);
}

test.beforeAll(async ({ browser }) => {
  api = await adminApi();
  const { token } = await api<{ token: string }>('POST', '/tokens', {
    maxUses: 1,
    note: 'settings e2e',
  });
  // Owner input is under test here, not machine load (the helper ignores load).
  agent = await startSettingsAgent({
    name: 'settings-e2e',
    managerUrl: MANAGER,
    quota: '64MiB',
    env: { FREELOADER_JOIN_TOKEN: token },
  });
  ({ dir, openUrl } = agent);
  await expect.poll(() => agent.agentId()).toBeTruthy();
  agentId = agent.agentId()!;
  page = await browser.newPage();
});

test.afterAll(async () => {
  await page?.close();
  // A donor enrolled here (with simulated owner activity) must not take part in the console
  // suite's placements: the helper revokes it.
  await stopSettingsAgent(agent, api);
});

test('the page needs the local token; the printed link carries it', async () => {
  const base = openUrl.replace(/#.*$/, '');
  expect((await page.request.get(`${base}api/state`)).status()).toBe(401);
  await page.goto(base);
  await expect(page.getByRole('textbox', { name: 'Local token' })).toBeVisible();
  await shot('settings-01-token');
  // The token file is private to the owner.
  const token = (await readFile(join(dir, 'settings-token'), 'utf8')).trim();
  expect(openUrl.endsWith(`#token=${token}`)).toBe(true);
  await page.goto(openUrl);
  await expect(page.getByRole('heading', { name: 'FreeLoader donor' })).toBeVisible();
  await expect(page.getByText('settings-e2e · online')).toBeVisible();
  await expect(page.getByTestId('governor-state')).toHaveText('Serving');
  // The token left the address bar (it stays in this tab's session storage).
  expect(page.url()).not.toContain('token');
  await shot('settings-02-state');
});

test('change the donated space: the agent and the manager take it', async () => {
  await page.getByLabel('Donated space', { exact: true }).fill('32 MiB');
  await page.getByRole('button', { name: 'Save space' }).click();
  await expect(page.getByText('0 B stored of 32 MiB donated')).toBeVisible();
  await managerSees((a) => a.quotaBytes === 32 * MiB);
  await page.getByLabel('Donated space', { exact: true }).fill('a lot');
  await page.getByRole('button', { name: 'Save space' }).click();
  await expect(page.getByText(/not a size|size/i).first()).toBeVisible();
  await shot('settings-03-quota');
});

test('pause for an hour, then resume; the manager hears both', async () => {
  await page.getByRole('button', { name: 'Pause for 1 hour' }).click();
  await expect(page.getByTestId('governor-state')).toHaveText('Paused');
  await expect(page.getByTestId('pause-state')).toContainText('paused until');
  await managerSees((a) => a.throttle === 'paused');
  await shot('settings-04-paused');
  await page.getByRole('button', { name: 'Resume', exact: true }).click();
  await expect(page.getByTestId('governor-state')).toHaveText('Serving');
  await expect(page.getByTestId('pause-state')).toHaveText('not paused');
  await managerSees((a) => a.throttle !== 'paused');
});

test('bandwidth caps apply when the owner is at the machine', async () => {
  await page.getByLabel('Cap while you use this computer (MB/s)').fill('3');
  await page.getByRole('button', { name: 'Save bandwidth' }).click();
  // The tray reports owner input the same way: the page shows the throttle and the cap.
  const base = openUrl.replace(/#.*$/, '');
  const token = new URLSearchParams(new URL(openUrl).hash.slice(1)).get('token');
  const res = await page.request.post(`${base}api/owner-activity`, {
    headers: { authorization: `Bearer ${token}` },
    data: { idleMs: 0 },
  });
  expect(res.status()).toBe(204);
  await expect(page.getByTestId('governor-state')).toHaveText(
    'Throttled: you are using this computer',
  );
  await expect(page.getByLabel('Serving cap')).toHaveText('3.0 MB/s');
  await managerSees((a) => a.throttle === 'active' && a.rateCap === 3_000_000);
  await shot('settings-05-owner-active');
});
