import { mkdir } from 'node:fs/promises';
import { expect, test, type Page } from '@playwright/test';

const URL = process.env.FL_E2E_URL!;
const PASSWORD = process.env.FL_E2E_PASSWORD!;
const SOURCE = process.env.FL_E2E_SOURCE!;
const SHOTS = new globalThis.URL('../test-results/screenshots/', import.meta.url).pathname;
const DATASET = 'e2e/climate/tas_2020.bin';

/** One shared page: the steps are one scientist's session, in order. */
test.describe.configure({ mode: 'serial' });
let page: Page;

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
}

test.beforeAll(async ({ browser }) => {
  await mkdir(SHOTS, { recursive: true });
  page = await browser.newPage();
});
test.afterAll(async () => {
  await page?.close();
});

test('the API refuses anonymous calls and the console asks to sign in', async () => {
  const anonymous = await page.request.get(`${URL}/api/v1/namespace`);
  expect(anonymous.status()).toBe(401);
  await page.goto(`${URL}/datasets`);
  await expect(page).toHaveURL(/\/login\?next=%2Fdatasets/);
  await shot('01-sign-in');
  await page.getByLabel('User name').fill('admin');
  await page.getByLabel('Password').fill('wrong password');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('alert')).toContainText('wrong username or password');
  await page.getByLabel('Password').fill(PASSWORD);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('heading', { name: 'Datasets' })).toBeVisible();
  await expect(page.getByText('No datasets yet')).toBeVisible();
  await shot('02-datasets-empty');
});

test('a bad or unreachable URI is rejected with a visible error', async () => {
  await page.getByRole('link', { name: 'Import', exact: true }).click();
  const uri = page.getByRole('textbox', { name: /^Source URI/ });
  await uri.fill('gopher://example.org/data.bin');
  await page.getByRole('button', { name: 'Probe source' }).click();
  await expect(
    page.getByText(/imports from http:\/\/ or https:\/\/ URIs, not gopher:/),
  ).toBeVisible();
  await uri.fill('http://127.0.0.1:9/missing.bin');
  await page.getByRole('button', { name: 'Probe source' }).click();
  const alert = page.getByRole('alert');
  await expect(alert).toContainText('The source could not be reached');
  await expect(alert).toContainText('SOURCE_UNREACHABLE');
  await shot('03-import-bad-uri');
});

test('import: probe shows size, ETag and Range support, then the transfer reaches 100 %', async () => {
  await page.getByRole('textbox', { name: /^Source URI/ }).fill(SOURCE);
  await page.getByRole('textbox', { name: /^Folder/ }).fill('e2e/climate');
  await page.getByRole('textbox', { name: /^Name/ }).fill('tas_2020.bin');
  await page.getByRole('textbox', { name: /^Stripe width/ }).fill('3');
  await page.getByRole('button', { name: 'Probe source' }).click();
  const probe = page.getByRole('region', { name: 'probe result' });
  await expect(probe.getByTestId('probe-size')).toHaveText('24.0 MiB');
  await expect(probe.getByText('supported', { exact: true })).toBeVisible();
  await expect(probe.getByText(process.env.FL_E2E_ETAG!)).toBeVisible();
  await expect(probe).toContainText('24 morsels striped 3 wide');
  await expect(probe).toContainText(
    '2 copies of each morsel (manager default (REPLICAS_DEFAULT=2))',
  );
  await shot('04-import-probe');
  await probe.getByRole('button', { name: 'Confirm import' }).click();

  await expect(page).toHaveURL(/\/transfers$/);
  const card = page.getByRole('article', { name: `import ${DATASET}` });
  await expect(card).toBeVisible();
  const bar = card.getByRole('progressbar', { name: `progress of ${DATASET}` });
  await expect(bar).toHaveAttribute('aria-valuenow', '100', { timeout: 60_000 });
  await expect(card.getByTestId('state')).toHaveText('done');
  await expect(card.getByTestId('percent')).toHaveText('100 %');
  await expect(
    card.getByRole('table', { name: 'per-donor breakdown' }).getByRole('row'),
  ).toHaveCount(4);
  await shot('05-transfers-done');
});

test('the dataset is browsable as folders, searchable, and shows its placement', async () => {
  await page.getByRole('link', { name: 'Datasets', exact: true }).click();
  await page.getByRole('button', { name: 'open folder e2e' }).click();
  await page.getByRole('button', { name: 'open folder climate' }).click();
  const row = page.getByRole('row').filter({ hasText: 'tas_2020.bin' });
  await expect(row).toContainText('24.0 MiB');
  await expect(row).toContainText('full');
  await expect(row).toContainText('ready');
  await expect(row.getByTestId('dataset-copies')).toHaveText('2/2');
  await shot('06-datasets-folder');
  await page.getByRole('searchbox', { name: 'Search datasets' }).fill('TAS_2020');
  await expect(page.getByRole('link', { name: DATASET })).toBeVisible();
  await shot('07-datasets-search');

  await page.getByRole('link', { name: DATASET }).click();
  await expect(page.getByRole('heading', { name: DATASET })).toBeVisible();
  const placement = page.getByRole('region', { name: 'Placement' });
  await expect(
    placement.getByRole('img', { name: 'placement map: 24 morsels over 3 donors' }),
  ).toBeVisible();
  await expect(placement.getByTestId('placement-cell')).toHaveCount(24);
  const donors = placement.getByRole('table', { name: 'donors holding this dataset' });
  // Two copies of 24 MiB over three donors: 16 MiB each.
  for (const name of ['donor-1', 'donor-2', 'donor-3']) {
    await expect(donors.getByRole('row').filter({ hasText: name })).toContainText('16.0 MiB');
  }
  await expect(page.getByTestId('dataset-health')).toHaveText(
    '2 copies wanted; live per morsel min 2, avg 2; 0 of 24 morsels at risk, 0 only at the source',
  );
  await shot('08-dataset-detail');
});

test('donors: three live donors; a join token comes with its enrollment command', async () => {
  // A client's report after reading the dataset from every donor feeds the rate history.
  const dataset = await (
    await page.request.get(`${URL}/api/v1/datasets/by-path?path=${encodeURIComponent(DATASET)}`)
  ).json();
  const donors: Array<{ id: string; name: string }> = await (
    await page.request.get(`${URL}/api/v1/agents`)
  ).json();
  const report = await page.request.post(`${URL}/api/v1/rates`, {
    headers: { 'x-freeloader-csrf': '1' },
    data: {
      datasetId: dataset.id,
      samples: donors.map((d) => ({ agentId: d.id, bytes: 8 * 1048576, seconds: 0.25 })),
      failures: [],
    },
  });
  expect(report.status()).toBe(200);
  await page.getByRole('link', { name: 'Donors' }).click();
  const table = page.getByRole('table', { name: 'donors' });
  await expect(table.getByText('live', { exact: true })).toHaveCount(3);
  // Each donor's join-time probe (local disk read, network down/up) and its observed rate.
  for (const name of ['donor-1', 'donor-2', 'donor-3']) {
    const row = table.getByRole('row').filter({ hasText: name });
    await expect(row.getByTestId('disk-read-rate')).toHaveText(/^disk \d+(\.\d+)? MB\/s/, {
      timeout: 60_000,
    });
    await expect(row.getByTestId('network-rate')).toHaveText(
      /^net download \d+(\.\d+)? MB\/s upload \d+(\.\d+)? MB\/s$/,
    );
    await expect(row.getByTestId('observed-rate')).toHaveText(/^\d+(\.\d+)? MB\/s \(\d+ reads?\)$/);
  }
  await page.getByLabel('Note').fill('lab-ws-12');
  await page.getByRole('button', { name: 'Create token' }).click();
  await expect(page.getByTestId('enroll-command')).toContainText(
    `freeloader agent --manager ${URL} --token flj_`,
  );
  await shot('09-donors-token');
  await page.keyboard.press('Escape');
  await expect(page.getByRole('table', { name: 'join tokens' })).toContainText('lab-ws-12');
  await shot('10-donors');
});

test('sign out: the console returns to sign-in and the API refuses the old session', async () => {
  const before = await page.request.get(`${URL}/api/v1/auth/me`);
  expect(before.status()).toBe(200);
  const session = (await page.context().cookies()).find((c) => c.name === 'fl_session');
  expect(session?.httpOnly).toBe(true);
  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('button', { name: 'Sign in' })).toBeVisible();
  await shot('11-signed-out');
  const after = await page.request.get(`${URL}/api/v1/datasets`);
  expect(after.status()).toBe(401);
  // Even replaying the old cookie by hand gets nothing.
  const replay = await page.request.get(`${URL}/api/v1/datasets`, {
    headers: { cookie: `fl_session=${session!.value}` },
  });
  expect(replay.status()).toBe(401);
});
