import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test, type Page } from '@playwright/test';

// The donor's own settings page, served by `freeloader agent` on 127.0.0.1 behind its local
// token, driven in Chromium: sign in by the printed link, change the donated space, pause and
// resume, set the bandwidth caps, and watch the state follow (and the manager hear of it).
const MANAGER = process.env.FL_E2E_URL!;
const PASSWORD = process.env.FL_E2E_PASSWORD!;
const CLI = fileURLToPath(new URL('../../apps/agent/dist/cli/main.js', import.meta.url));
const SHOTS = new globalThis.URL('../test-results/screenshots/', import.meta.url).pathname;
const MiB = 1048576;

test.describe.configure({ mode: 'serial' });
let page: Page;
let agent: ChildProcess;
let dir: string;
let openUrl: string;
let admin: string;
let agentId: string;

async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${MANAGER}/api/v1${path}`, {
    method,
    headers: {
      ...(admin ? { authorization: `Bearer ${admin}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** The manager's view of our donor, polled until `ok` holds. */
async function managerSees(ok: (a: Record<string, unknown>) => boolean): Promise<void> {
  await expect
    .poll(async () => {
      const list = await api<Array<Record<string, unknown>>>('GET', '/agents');
      return ok(list.find((a) => a.id === agentId) ?? {});
    })
    .toBe(true);
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
}

test.beforeAll(async ({ browser }) => {
  await mkdir(SHOTS, { recursive: true });
  admin = (
    await api<{ token: string }>('POST', '/auth/login', { username: 'admin', password: PASSWORD })
  ).token;
  const { token } = await api<{ token: string }>('POST', '/tokens', {
    maxUses: 1,
    note: 'settings e2e',
  });
  dir = await mkdtemp(join(tmpdir(), 'fl-e2e-settings-'));
  agent = spawn(
    process.execPath,
    [
      CLI,
      'agent',
      '--manager',
      MANAGER,
      '--dir',
      dir,
      '--quota',
      '64MiB',
      '--listen',
      '127.0.0.1:0',
      '--name',
      'settings-e2e',
      '--settings',
      '127.0.0.1:0',
    ],
    {
      // Machine load is not under test here (the suite shares the box): owner input is.
      env: {
        ...process.env,
        FREELOADER_JOIN_TOKEN: token,
        FREELOADER_IGNORE_LOAD: '1',
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  agent.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  await expect
    .poll(() => /^settings at (\S+)$/m.exec(stderr)?.[1], { timeout: 20_000 })
    .toBeTruthy();
  openUrl = /^settings at (\S+)$/m.exec(stderr)![1]!;
  agentId = /^agent (\S+) serving at/m.exec(stderr)![1]!;
  page = await browser.newPage();
});

test.afterAll(async () => {
  await page?.close();
  // Leave the shared cluster as we found it: a donor enrolled here (with simulated owner
  // activity) must not take part in the console suite's placements.
  if (agentId) await api('DELETE', `/agents/${agentId}`).catch(() => undefined);
  if (agent && agent.exitCode === null) {
    const exited = new Promise((r) => agent.once('exit', r));
    agent.kill('SIGTERM');
    await exited;
  }
  if (dir) await rm(dir, { recursive: true, force: true });
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
