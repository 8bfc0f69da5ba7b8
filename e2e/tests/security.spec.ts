import { expect, test, type Page } from '@playwright/test';
import { shot as screenshot } from '../agent-process.js';

const URL = process.env.FL_E2E_URL!;
const PASSWORD = process.env.FL_E2E_PASSWORD!;

/** One admin's session, in order: a refused source, the allow list, the audit log. */
test.describe.configure({ mode: 'serial' });
let page: Page;

const shot = (name: string): Promise<void> => screenshot(page, name);

test.beforeAll(async ({ browser }) => {
  page = await browser.newPage();
  await page.goto(`${URL}/login`);
  await page.getByLabel('User name').fill('admin');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Datasets' })).toBeVisible();
});
test.afterAll(async () => {
  await page?.close();
});

test('a cloud-metadata source is refused with the way to allow it', async () => {
  await page.getByRole('link', { name: 'Import', exact: true }).click();
  await page
    .getByRole('textbox', { name: /^Source URI/ })
    .fill('http://169.254.169.254/latest/meta-data/iam.json');
  await page.getByRole('button', { name: 'Probe source' }).click();
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('Sources may not reach that address');
  await expect(alert).toContainText('SOURCE_FORBIDDEN');
  await expect(alert).toContainText('an admin allows it');
  await shot('security-01-source-forbidden');
});

test('an admin edits the source allow list and reads the audit log', async () => {
  await page.getByRole('link', { name: 'Security' }).click();
  await expect(page.getByRole('heading', { name: 'Allowed source hosts' })).toBeVisible();
  // The suite's own loopback allowance comes from the manager's environment, shown apart.
  await expect(page.getByText(/FREELOADER_SOURCE_ALLOW/)).toContainText('127.0.0.0/8');
  await page.getByLabel('Allowed hosts and networks').fill('data.lab.internal\n10.20.0.0/16');
  await page.getByRole('button', { name: 'Save allow list' }).click();
  await expect(page.getByText('Saved', { exact: true })).toBeVisible();
  const settings = await (await page.request.get(`${URL}/api/v1/settings/sources`)).json();
  expect(settings.allow).toEqual(['data.lab.internal', '10.20.0.0/16']);

  const log = page.getByRole('table', { name: 'audit log' });
  await expect(log.getByRole('row').filter({ hasText: 'settings.sources' }).first()).toContainText(
    '10.20.0.0/16',
  );
  await expect(
    log.getByRole('row').filter({ hasText: 'dataset.import (refused)' }).first(),
  ).toContainText('169.254.169.254');
  await expect(log.getByRole('row').filter({ hasText: 'login.succeeded' }).first()).toContainText(
    'admin',
  );
  await shot('security-02-allow-list-and-audit');

  // Leave the cluster as it was for any spec after this one.
  await page.getByLabel('Allowed hosts and networks').fill('');
  await page.getByRole('button', { name: 'Save allow list' }).click();
  await expect(page.getByText('Saved', { exact: true })).toBeVisible();
});
