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

// First run without a terminal at hand: `freeloader agent` started with no identity and no join
// token serves its settings page with an enrollment form. A refused token and an unreachable
// manager are reported in the form; a good URL + token enrolls the daemon (the same start as
// `--token`) and the page turns into the normal settings, with the manager seeing the donor.
const MANAGER = process.env.FL_E2E_URL!;

test.describe.configure({ mode: 'serial' });
let page: Page;
let api: Api;
let agent: SettingsAgent;

const shot = (name: string): Promise<void> => screenshot(page, name);

/** Fill the enrollment form and press Join. */
async function submitEnrollment(managerUrl: string, token: string): Promise<void> {
  await page.getByLabel('Manager URL').fill(managerUrl);
  await page.getByLabel('Join token').fill(token);
  await page.getByRole('button', { name: 'Join' }).click();
}

test.beforeAll(async ({ browser }) => {
  api = await adminApi();
  // No --token and no FREELOADER_JOIN_TOKEN: the page is the only way in.
  agent = await startSettingsAgent({
    name: 'enroll-e2e',
    managerUrl: 'http://127.0.0.1:9',
    quota: '16MiB',
    env: { FREELOADER_JOIN_TOKEN: undefined },
  });
  page = await browser.newPage();
});

test.afterAll(async () => {
  await page?.close();
  await stopSettingsAgent(agent, api);
});

test('an agent that has not joined serves the page with an enrollment form', async () => {
  expect(agent.process.exitCode).toBeNull();
  expect(agent.stderr()).toContain('not enrolled yet');
  await page.goto(agent.openUrl);
  await expect(page.getByRole('heading', { name: 'Join a FreeLoader cache' })).toBeVisible();
  await expect(page.getByText('not enrolled · setup')).toBeVisible();
  await expect(page.getByTestId('governor-state')).toHaveText('Not joined');
  // The form starts from the command line's manager and quota.
  await expect(page.getByLabel('Manager URL')).toHaveValue('http://127.0.0.1:9');
  await expect(page.getByLabel('Space to donate')).toHaveValue('16 MiB');
  // Nothing else to set before joining.
  await expect(page.getByRole('button', { name: 'Save space' })).toHaveCount(0);
  await shot('enroll-01-form');
});

test('a refused join token is reported in the form, which stays', async () => {
  await submitEnrollment(MANAGER, 'flj_not-a-real-token');
  await expect(page.getByTestId('enroll-error')).toContainText('refused the join token');
  // Not mistaken for a wrong local token: the form is still there, not the token prompt.
  await expect(page.getByRole('heading', { name: 'Join a FreeLoader cache' })).toBeVisible();
  await expect(page.getByRole('textbox', { name: 'Local token' })).toHaveCount(0);
  await shot('enroll-02-bad-token');
});

test('an unreachable manager is reported in the form', async () => {
  const { token } = await api<{ token: string }>('POST', '/tokens', { maxUses: 1 });
  // Port 9 (discard) on loopback: nothing listens there.
  await submitEnrollment('http://127.0.0.1:9', token);
  await expect(page.getByTestId('enroll-error')).toContainText('unreachable');
  await submitEnrollment('http://', token);
  await expect(page.getByTestId('enroll-error')).toContainText('not a manager URL');
  expect(agent.process.exitCode).toBeNull();
});

test('a good URL and token enroll the daemon; the page shows the normal settings', async () => {
  const { token } = await api<{ token: string }>('POST', '/tokens', {
    maxUses: 1,
    note: 'enroll e2e',
  });
  await submitEnrollment(MANAGER, token);
  await expect(page.getByText('enroll-e2e · online')).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('governor-state')).toHaveText('Serving');
  await expect(page.getByRole('button', { name: 'Save space' })).toBeVisible();
  await expect(page.getByText('0 B stored of 16 MiB donated')).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Join a FreeLoader cache' })).toHaveCount(0);
  await shot('enroll-03-enrolled');
  // The CLI reports the daemon as a `--token` start would, and the manager has the donor.
  await expect.poll(() => agent.agentId()).toBeTruthy();
  const agentId = agent.agentId()!;
  const identity = JSON.parse(await readFile(join(agent.dir, 'identity.json'), 'utf8')) as {
    agentId: string;
    managerUrl: string;
  };
  expect(identity).toMatchObject({ agentId, managerUrl: MANAGER });
  await expect
    .poll(async () => {
      const list = await api<Array<{ id: string; state: string; quotaBytes: number }>>(
        'GET',
        '/agents',
      );
      const me = list.find((a) => a.id === agentId);
      return me ? `${me.state} ${me.quotaBytes}` : 'missing';
    })
    .toBe(`live ${16 * 1048576}`);
  // Enrolling twice is refused.
  const local = new URLSearchParams(new URL(agent.openUrl).hash.slice(1)).get('token');
  const again = await page.request.post(`${agent.openUrl.replace(/#.*$/, '')}api/enroll`, {
    headers: { authorization: `Bearer ${local}` },
    data: { managerUrl: MANAGER, token, quotaBytes: 1 },
  });
  expect(again.status()).toBe(409);
});
