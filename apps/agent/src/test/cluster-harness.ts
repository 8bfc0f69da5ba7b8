import type { ChildProcess } from 'node:child_process';
import type { KeyObject } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startManager, type Config, type RunningManager } from '@freeloader/manager';
import { setPlacement, type NewDataset } from '@freeloader/manager/testing';
import type {
  AgentView,
  DatasetState,
  DatasetView,
  JoinTokenCreate,
  JoinTokenCreated,
  LoginResponse,
} from '@freeloader/protocol';
import { LOOPBACK_SOURCES } from '@freeloader/sources/testing';
import { ManagerClient } from '../manager-client.js';
import { exited, freePort, isRunning, spawnCli, waitFor } from './processes.js';

export { killSpawned, runCli, waitFor, freePort, type CliResult } from './processes.js';

/**
 * Soft-state timings for tests (milliseconds): heartbeats fast, so tests see state changes
 * soon, but stale only after 5 s of silence: at load average 9-11 on 2 cores a 1 s window made
 * a live donor stale between "wait until live" and the next step.
 */
export const TEST_TIMINGS = {
  heartbeatIntervalMs: 200,
  staleAfterMs: 5_000,
  deadAfterMs: 10_000,
} as const;

/**
 * Manager decorations tests reach into directly (the manager's package types do not carry its
 * Fastify augmentations). Only for arranging state no public route can make.
 */
export interface ManagerInternals {
  pg: Parameters<typeof setPlacement>[0];
  signingKeys: { privateKey: KeyObject; publicKeyPem: string };
  namespaceRepo: {
    createDataset(input: NewDataset): Promise<DatasetView>;
    setState(id: string, state: DatasetState): Promise<boolean>;
  };
}

export function internalsOf(manager: RunningManager): ManagerInternals {
  // The manager's Fastify augmentation (pg, signingKeys) is not in the agent's build.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  return manager.app as unknown as ManagerInternals;
}

export interface TestManager {
  /** The running manager (replaced by {@link TestManager.start}). */
  manager: RunningManager;
  /** The manager's URL, the same across stop() and start(). */
  url: string;
  /** The manager's FREELOADER_HOME (a temp dir, removed by close()). */
  home: string;
  adminPassword: string;
  /** Signed in as the first admin. */
  admin: ManagerClient;
  createJoinToken(opts?: JoinTokenCreate): Promise<JoinTokenCreated>;
  /** `GET /api/v1/agents` as the admin. */
  agents(): Promise<AgentView[]>;
  /** Stop the manager (HTTP and embedded PostgreSQL) but keep its home. */
  stop(): Promise<void>;
  /** Start a manager again on the same home, HTTP port and PostgreSQL port. */
  start(): Promise<void>;
  /** Stop and remove the home. Idempotent. */
  close(): Promise<void>;
}

/**
 * A real manager on its own embedded PostgreSQL in a temp home (one per test file: it takes a
 * couple of seconds), with test soft-state timings and an admin session.
 *
 * @example
 *   const tm = await startTestManager();
 *   const { token } = await tm.createJoinToken();
 *   afterAll(() => tm.close());
 */
export async function startTestManager(overrides: Partial<Config> = {}): Promise<TestManager> {
  // Under the temp dir, not $HOME: PostgreSQL runs as `postgres` when we are root and must be
  // able to reach its data directory.
  const home = await mkdtemp(join(tmpdir(), 'fl-agent-it-'));
  await chmod(home, 0o711);
  const config: Partial<Config> = {
    home,
    host: '127.0.0.1',
    port: 0,
    embeddedPgPort: await freePort(),
    // FREELOADER_TEST_LOG=error shows the manager's own account of a failing test.
    logLevel: process.env.FREELOADER_TEST_LOG ?? 'silent',
    softStateFlushMs: 500,
    // The tests' sources are test servers on loopback: allowed here, on purpose.
    sourceAllow: [...LOOPBACK_SOURCES],
    ...TEST_TIMINGS,
    ...overrides,
  };
  let admin: ManagerClient | undefined;
  let manager: RunningManager | undefined;
  let adminPassword = '';
  let url = '';
  let closed = false;

  const tm: TestManager = {
    get manager() {
      if (!manager) throw new Error('the test manager is stopped');
      return manager;
    },
    // Stays valid while stopped: a restart reuses the port.
    get url() {
      return url;
    },
    home,
    get adminPassword() {
      return adminPassword;
    },
    get admin() {
      if (!admin) throw new Error('the test manager is stopped');
      return admin;
    },
    createJoinToken: (opts = {}) => tm.admin.request<JoinTokenCreated>('POST', '/tokens', opts),
    agents: () => tm.admin.request<AgentView[]>('GET', '/agents'),
    async start() {
      manager = await startManager(config);
      // Later starts must reuse the port: enrolled agents know the manager by its URL.
      config.port = Number(new URL(manager.url).port);
      url = manager.url;
      adminPassword = manager.adminPassword ?? adminPassword;
      admin = new ManagerClient(manager.url, undefined, { ca: manager.caPem });
      const session = await admin.request<LoginResponse>('POST', '/auth/login', {
        username: 'admin',
        password: adminPassword,
      });
      admin.setCredentials({ kind: 'user', token: session.token });
    },
    async stop() {
      await admin?.close();
      await manager?.close();
      admin = undefined;
      manager = undefined;
    },
    async close() {
      if (closed) return;
      closed = true;
      await tm.stop().catch(() => undefined);
      await rm(home, { recursive: true, force: true });
    },
  };
  try {
    await tm.start();
  } catch (e) {
    await tm.close();
    throw e;
  }
  return tm;
}

export interface SpawnAgentOptions {
  managerUrl: string;
  token?: string;
  /** State directory (identity, settings, store). */
  dir: string;
  /** `--quota` text, e.g. `64MiB`; omitted on restarts to use the remembered one. */
  quota?: string;
  /** `--listen`; defaults to a free port on 127.0.0.1. */
  listen?: string;
  name?: string;
  extraArgs?: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** How long to wait for the `serving at` line (milliseconds). */
  timeoutMs?: number;
}

export interface SpawnedAgent {
  child: ChildProcess;
  /** The agent's morsel service URL. */
  url: string;
  agentId: string;
  /** Everything the agent wrote to stderr so far (its status lines and JSON logs). */
  stderr(): string;
  /** Signal the agent and resolve with its exit code (null when a signal ended it). */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

const SERVING = /^agent (\S+) serving at (\S+) /m;

/**
 * Start `freeloader agent` as a real child process; resolves once it prints its
 * `agent <id> serving at <url>` line, rejects with its stderr when it exits first or times out.
 */
export async function spawnAgent(opts: SpawnAgentOptions): Promise<SpawnedAgent> {
  const args = [
    'agent',
    '--manager',
    opts.managerUrl,
    '--dir',
    opts.dir,
    '--listen',
    opts.listen ?? '127.0.0.1:0',
    '--name',
    opts.name ?? 'test-agent',
    ...(opts.quota ? ['--quota', opts.quota] : []),
    ...(opts.token ? ['--token', opts.token] : []),
    ...(opts.extraArgs ?? []),
  ];
  // Loopback sources allowed by the agent itself too (the manager's list arrives with the first
  // heartbeat; a job claimed before must not depend on it).
  const child = spawnCli(args, {
    LOG_LEVEL: 'info',
    FREELOADER_SOURCE_ALLOW: LOOPBACK_SOURCES.join(','),
    ...opts.env,
  });
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdout!.resume();
  const exitedEarly = exited(child).then((code) => {
    throw new Error(`agent exited (${code ?? child.signalCode}) before serving:\n${stderr}`);
  });
  const match = await Promise.race([
    waitFor(
      'the agent serving line',
      () => SERVING.exec(stderr) ?? undefined,
      opts.timeoutMs ?? 60_000,
      20,
    ),
    exitedEarly,
  ]).catch((e: unknown) => {
    if (isRunning(child)) child.kill('SIGKILL');
    throw e instanceof Error && !e.message.includes(stderr)
      ? new Error(`${e.message}\n${stderr}`)
      : e;
  });
  exitedEarly.catch(() => undefined);
  return {
    child,
    agentId: match[1]!,
    url: match[2]!,
    stderr: () => stderr,
    async stop(signal: NodeJS.Signals = 'SIGTERM') {
      if (isRunning(child)) child.kill(signal);
      return exited(child);
    },
  };
}

/** Wait until the manager reports `agentId` in `state`; returns that view. */
export function waitForAgentState(
  tm: TestManager,
  agentId: string,
  state: AgentView['state'],
  timeoutMs = 60_000,
): Promise<AgentView> {
  return waitFor(
    `agent ${agentId} to be ${state}`,
    async () => (await tm.agents()).find((a) => a.id === agentId && a.state === state),
    timeoutMs,
  );
}
