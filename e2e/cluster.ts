import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startManager, type RunningManager } from '@freeloader/manager';
import { freePort } from '@freeloader/manager/testing';
import { LOOPBACK_SOURCES, startTestServer, type TestServer } from '@freeloader/sources/testing';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CLI = join(ROOT, 'apps/agent/dist/cli/main.js');
const CONSOLE = join(ROOT, 'apps/console/dist');

export interface E2eCluster {
  manager: RunningManager;
  adminPassword: string;
  source: TestServer;
  agents: ChildProcess[];
  stop(): Promise<void>;
}

/** Call the manager's API as a bearer-token client (the CLI's way; no CSRF header needed). */
async function call<T>(
  url: string,
  token: string | null,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const res = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (!res.ok) throw new Error(`${method} ${path}: HTTP ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

function spawnAgent(managerUrl: string, token: string, dir: string, name: string): ChildProcess {
  const child = spawn(
    process.execPath,
    [
      CLI,
      'agent',
      '--manager',
      managerUrl,
      '--dir',
      dir,
      '--quota',
      '256MiB',
      '--listen',
      '127.0.0.1:0',
      '--name',
      name,
    ],
    {
      // The join token goes by environment, as the cluster command does it; and, as there, the
      // agents sharing one machine do not throttle on its load (each other's work, a busy CI
      // machine): the throttle spec starts its own agent that does.
      env: {
        ...process.env,
        FREELOADER_JOIN_TOKEN: token,
        FREELOADER_IGNORE_LOAD: '1',
        FREELOADER_SOURCE_ALLOW: LOOPBACK_SOURCES.join(','),
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  child.stderr?.on('data', (b: Buffer) => {
    if (process.env.E2E_VERBOSE) process.stderr.write(`[${name}] ${b.toString()}`);
  });
  return child;
}

async function waitFor(
  what: string,
  check: () => Promise<boolean>,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * Start the cluster the suite drives: a manager (embedded PostgreSQL, serving the built console)
 * in this process, `agents` agent processes enrolled with one join token, and an HTTP source of
 * `sizeBytes` that honours Range and sends an ETag.
 */
export async function startCluster(opts: {
  agents: number;
  sizeBytes: number;
}): Promise<E2eCluster> {
  for (const [what, path] of [
    ['agent CLI', CLI],
    ['console', join(CONSOLE, 'index.html')],
  ]) {
    if (!existsSync(path!))
      throw new Error(`${what} not built (${path}): run \`npm run build\` first`);
  }
  const home = await mkdtemp(join(tmpdir(), 'fl-e2e-'));
  // Embedded PostgreSQL runs as the `postgres` user, which must be able to reach its data dir.
  await chmod(home, 0o711);
  const agents: ChildProcess[] = [];
  let manager: RunningManager | undefined;
  let source: TestServer | undefined;
  const stop = async () => {
    await Promise.all(
      agents.map(
        (a) =>
          new Promise<void>((resolve) => {
            if (a.exitCode !== null || a.signalCode !== null) return resolve();
            a.once('exit', () => resolve());
            a.kill('SIGTERM');
            setTimeout(() => a.kill('SIGKILL'), 5_000).unref();
          }),
      ),
    );
    await source?.close().catch(() => undefined);
    await manager?.close().catch(() => undefined);
    await rm(home, { recursive: true, force: true });
  };
  // History samples every second, so charts fill within a test (the default is 30 s).
  process.env.FREELOADER_HISTORY_SAMPLE_S ??= '1';
  try {
    manager = await startManager({
      home,
      port: 0,
      embeddedPgPort: await freePort(),
      // Quiet unless asked: the suite's own output is the report.
      logLevel: process.env.E2E_VERBOSE ? 'info' : 'fatal',
      consoleDir: CONSOLE,
      heartbeatIntervalMs: 500,
      // The suite's sources are test servers on loopback: allowed here, on purpose.
      sourceAllow: [...LOOPBACK_SOURCES],
      staleAfterMs: 5_000,
      deadAfterMs: 20_000,
    });
    const adminPassword = manager.adminPassword!;
    const { token } = await call<{ token: string }>(manager.url, null, 'POST', '/auth/login', {
      username: 'admin',
      password: adminPassword,
    });
    const joinToken = await call<{ token: string }>(manager.url, token, 'POST', '/tokens', {
      maxUses: opts.agents,
      note: 'e2e cluster',
    });
    for (let i = 1; i <= opts.agents; i++) {
      const dir = join(home, `agent-${i}`);
      await mkdir(dir, { recursive: true });
      agents.push(spawnAgent(manager.url, joinToken.token, dir, `donor-${i}`));
    }
    const url = manager.url;
    await waitFor(`${opts.agents} live agents`, async () => {
      const dead = agents.find((a) => a.exitCode !== null);
      if (dead) throw new Error(`an agent exited with ${dead.exitCode}`);
      const list = await call<{ state: string }[]>(url, token, 'GET', '/agents');
      return list.filter((a) => a.state === 'live').length === opts.agents;
    });
    // Slow enough per connection that progress is visible for a moment, fast enough to be brief.
    source = await startTestServer({ size: opts.sizeBytes, bytesPerSecond: 3 * 1048576 });
    return { manager, adminPassword, source, agents, stop };
  } catch (e) {
    await stop();
    throw e;
  }
}
