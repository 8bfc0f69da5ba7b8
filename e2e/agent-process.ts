import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, type Page } from '@playwright/test';
import { LOOPBACK_SOURCES } from '@freeloader/sources/testing';

// What the agent specs share: the manager's API as the signed-in admin, a `freeloader agent`
// with its settings page on loopback, and screenshots under test-results/.
const CLI = fileURLToPath(new URL('../apps/agent/dist/cli/main.js', import.meta.url));
const SHOTS = fileURLToPath(new URL('./test-results/screenshots/', import.meta.url));
const MANAGER = process.env.FL_E2E_URL!;
const PASSWORD = process.env.FL_E2E_PASSWORD!;

export type Api = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/**
 * The e2e cluster's API signed in as its admin (a bearer token, the CLI's way).
 *
 * @example const api = await adminApi(); await api('POST', '/tokens', { maxUses: 1 });
 */
export async function adminApi(): Promise<Api> {
  let token: string | null = null;
  const api: Api = async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const res = await fetch(`${MANAGER}/api/v1${path}`, {
      method,
      headers: {
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  token = (
    await api<{ token: string }>('POST', '/auth/login', {
      username: 'admin',
      password: PASSWORD,
    })
  ).token;
  return api;
}

export interface SettingsAgent {
  process: ChildProcess;
  dir: string;
  /** The printed settings link (with its local token in the fragment). */
  openUrl: string;
  /** Everything the agent printed on stderr so far. */
  stderr(): string;
  /** The agent id it printed once its daemon runs, if it has. */
  agentId(): string | undefined;
}

/**
 * `freeloader agent --settings 127.0.0.1:0` in a fresh state directory, resolved once it has
 * printed its settings link. Machine load is never under test in the e2e suite (it shares the
 * box), so FREELOADER_IGNORE_LOAD is set; `env` adds or removes (undefined) variables.
 *
 * @example const a = await startSettingsAgent({ name: 'x', managerUrl, quota: '64MiB', env: { FREELOADER_JOIN_TOKEN: t } });
 */
export async function startSettingsAgent(o: {
  name: string;
  managerUrl: string;
  quota: string;
  env?: Record<string, string | undefined>;
}): Promise<SettingsAgent> {
  const dir = await mkdtemp(join(tmpdir(), `fl-e2e-${o.name}-`));
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    FREELOADER_IGNORE_LOAD: '1',
    // Its sources are test servers on loopback: allowed on purpose.
    FREELOADER_SOURCE_ALLOW: LOOPBACK_SOURCES.join(','),
    LOG_LEVEL: 'warn',
  };
  for (const [k, v] of Object.entries(o.env ?? {})) {
    if (v === undefined) delete env[k];
    else env[k] = v;
  }
  const args = ['agent', '--manager', o.managerUrl, '--dir', dir, '--quota', o.quota];
  const child = spawn(
    process.execPath,
    [CLI, ...args, '--listen', '127.0.0.1:0', '--name', o.name, '--settings', '127.0.0.1:0'],
    { env, stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr += b.toString()));
  const link = (): string | undefined => /^settings at (\S+)$/m.exec(stderr)?.[1];
  await expect.poll(link, { timeout: 60_000 }).toBeTruthy();
  return {
    process: child,
    dir,
    openUrl: link()!,
    stderr: () => stderr,
    agentId: () => /^agent (\S+) serving at/m.exec(stderr)?.[1],
  };
}

/**
 * Leave the shared cluster as we found it: revoke the donor (so it takes no part in other
 * suites' placements), stop the process, remove its state.
 */
export async function stopSettingsAgent(
  agent: SettingsAgent | undefined,
  api: Api | undefined,
): Promise<void> {
  if (!agent) return;
  const id = agent.agentId();
  if (id && api) await api('DELETE', `/agents/${id}`).catch(() => undefined);
  const child = agent.process;
  if (child.exitCode === null && child.signalCode === null) {
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }
  await rm(agent.dir, { recursive: true, force: true });
}

/** A full-page screenshot under e2e/test-results/screenshots/. */
export async function shot(page: Page, name: string): Promise<void> {
  await mkdir(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}
