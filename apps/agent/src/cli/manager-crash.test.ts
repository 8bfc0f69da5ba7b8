import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { procInfo } from '@freeloader/manager/testing';
import { afterAll, describe, expect, it } from 'vitest';
import {
  exited,
  freePort,
  isRunning,
  pidsMentioning,
  spawnCli,
  waitFor,
} from '../test/processes.js';

let home = '';
afterAll(async () => {
  if (!home) return;
  for (const pid of await pidsMentioning(home)) process.kill(pid, 'SIGKILL');
  await rm(home, { recursive: true, force: true });
});

/** The pid in the embedded PostgreSQL's lock file. */
async function postmasterPid(): Promise<number> {
  const text = await readFile(join(home, 'manager', 'pgdata', 'postmaster.pid'), 'utf8');
  return Number(text.split('\n', 1)[0]);
}

/**
 * Whether `pid` is a running process, as the manager's own stale-lock check sees it: a zombie
 * (exited, waiting for PID 1 to reap it — the orphan's parent was the killed manager) holds
 * nothing and counts as gone.
 */
function alive(pid: number): boolean {
  return procInfo(pid) !== null;
}

interface Probe {
  status: number;
  retryAfter: string | null;
}

async function probe(url: string, token?: string): Promise<Probe | undefined> {
  try {
    const res = await fetch(url, {
      headers: token ? { authorization: `Bearer ${token}` } : {},
      signal: AbortSignal.timeout(10_000),
    });
    await res.arrayBuffer();
    return { status: res.status, retryAfter: res.headers.get('retry-after') };
  } catch {
    return undefined;
  }
}

/**
 * The crashes of issue 16, on a real `freeloader manager` process: kill -9 of the manager (its
 * PostgreSQL orphaned), then kill -9 of the embedded PostgreSQL under a running manager.
 */
describe('a manager that survives crashes', { timeout: 300_000 }, () => {
  it('restarts after kill -9 and recovers from a killed PostgreSQL by itself', async () => {
    home = await mkdtemp(join(tmpdir(), 'fl-crash-'));
    await chmod(home, 0o711); // embedded PostgreSQL runs as `postgres` when we are root
    const port = await freePort();
    const base = `http://127.0.0.1:${port}/api/v1`;
    const env = { EMBEDDED_PG_PORT: String(await freePort()), LOG_LEVEL: 'warn' };
    const start = () => {
      const child = spawnCli(['manager', '--listen', `127.0.0.1:${port}`, '--home', home], env);
      // Status lines on stderr, the JSON log on stdout: both, in arrival order.
      let output = '';
      child.stderr!.on('data', (b: Buffer) => (output += b.toString()));
      child.stdout!.on('data', (b: Buffer) => (output += b.toString()));
      return { child, stderr: () => output };
    };
    const healthy = (m: ReturnType<typeof start>) =>
      waitFor(
        'the manager to answer /health with 200',
        async () => {
          if (!isRunning(m.child)) throw new Error(`manager exited:\n${m.stderr()}`);
          return (await probe(`${base}/health`))?.status === 200 ? true : undefined;
        },
        120_000,
        100,
      );

    const first = start();
    await healthy(first);
    const orphan = await postmasterPid();
    first.child.kill('SIGKILL');
    await exited(first.child);
    // The embedded PostgreSQL outlived its manager (as it did in issue 16).
    expect(alive(orphan)).toBe(true);

    const second = start();
    try {
      await healthy(second);
      expect(alive(orphan), second.stderr()).toBe(false);
      expect(second.stderr()).toMatch(
        /stopping the PostgreSQL \(pid \d+\) a previous manager left/,
      );
      const server = await postmasterPid();
      expect(server).not.toBe(orphan);

      const password = (await readFile(join(home, 'manager', 'admin-password'), 'utf8')).trim();
      const login = await fetch(`${base}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ username: 'admin', password }),
      });
      const { token } = (await login.json()) as { token: string };

      // Kill the database under the running manager; watch health and an API route.
      process.kill(server, 'SIGKILL');
      const seen: Array<{ health?: Probe; api?: Probe }> = [];
      await waitFor(
        'the manager to be healthy again with a new PostgreSQL',
        async () => {
          if (!isRunning(second.child)) throw new Error(`manager exited:\n${second.stderr()}`);
          const [health, api] = await Promise.all([
            probe(`${base}/health`),
            probe(`${base}/agents`, token),
          ]);
          seen.push({ health, api });
          const restarted = await postmasterPid().catch(() => server);
          return health?.status === 200 && api?.status === 200 && restarted !== server
            ? true
            : undefined;
        },
        120_000,
        20,
      );
      // While it was down: 503 with Retry-After from both, never a 500.
      const down = seen.filter((s) => s.health?.status === 503);
      expect(down.length, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(down.every((s) => s.health!.retryAfter !== null)).toBe(true);
      const apiDown = seen.filter((s) => s.api?.status === 503);
      expect(apiDown.length, JSON.stringify(seen)).toBeGreaterThan(0);
      expect(apiDown.every((s) => s.api!.retryAfter !== null)).toBe(true);
      expect(seen.filter((s) => s.api?.status === 500 || s.health?.status === 500)).toEqual([]);
      expect(second.stderr()).toMatch(/embedded PostgreSQL restarted/);
    } finally {
      second.child.kill('SIGTERM');
      expect(await exited(second.child), second.stderr()).toBe(0);
    }
  });
});
