import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import { SOURCE_ALLOW_ENV } from '@freeloader/sources';
import { type AgentView, type JoinTokenCreated, type LoginResponse } from '@freeloader/protocol';
import { identityPath } from '../../state/identity.js';
import { ManagerClient } from '../../manager-client.js';
import { requireManagerInstalled } from '../manager-package.js';
import { adminPasswordPath, freeloaderHome } from '../paths.js';
import { runUntilSignal } from '../run-until-signal.js';
import { AGENT_NODE_FLAGS } from '../agent-node-flags.js';
import { SupervisedChild } from '../supervised-child.js';
import { demoSourceEnv } from './demo-sources.js';

/** How long the manager (embedded PostgreSQL included) may take to come up (milliseconds). */
const MANAGER_READY_TIMEOUT_MS = 60_000;
/** How long the cluster waits for every agent to heartbeat before giving up (milliseconds). */
const AGENTS_READY_TIMEOUT_MS = 45_000;
/** Grace period for an agent to exit on SIGTERM before it is killed (milliseconds). */
const AGENT_STOP_GRACE_MS = 10_000;
/** The manager also stops its PostgreSQL, which checkpoints first (milliseconds). */
const MANAGER_STOP_GRACE_MS = 30_000;

interface ClusterOptions {
  agents: string;
  quota: string;
  port: string;
  agentBasePort: string;
  home: string;
  governor: boolean;
}

/**
 * Environment of the demo cluster's agents. They share one machine and one owner, so each one's
 * governor would take the others' CPU and disk use for the owner's and throttle: by default the
 * agents do not watch machine load (FREELOADER_IGNORE_LOAD=1; owner input, schedules and pauses
 * still govern them). `--governor` turns load watching back on.
 *
 * @example agentGovernorEnv(false) // → { FREELOADER_IGNORE_LOAD: '1' }
 */
export function agentGovernorEnv(governor: boolean): NodeJS.ProcessEnv {
  return { FREELOADER_IGNORE_LOAD: governor ? '0' : '1' };
}

/**
 * `freeloader cluster` (what `npm start` runs): a manager on embedded PostgreSQL plus N agent
 * processes with their own stores, all on loopback; Ctrl-C stops everything. Every part runs as
 * its own `freeloader` child process, supervised from here (see {@link SupervisedChild}).
 */
export function registerCluster(program: Command): void {
  program
    .command('cluster')
    .description('run a local cluster: manager + N donor agents on this machine')
    .option('--agents <n>', 'number of donor agents', '3')
    .option('--quota <size>', 'quota of each agent', '2GiB')
    .option('--port <port>', 'manager port (0: any free port)', '7400')
    .option(
      '--agent-base-port <port>',
      'first agent port; agents use consecutive ports (0: any free ports)',
      '7411',
    )
    .option('--home <dir>', 'FreeLoader home for the cluster', freeloaderHome())
    .option(
      '--governor',
      "let each agent's governor throttle on machine load (off by default: the agents share " +
        'this machine and would throttle one another)',
      false,
    )
    .action(async (opts: ClusterOptions) => {
      requireManagerInstalled();
      const cluster = new LocalCluster(opts);
      // Signals are handled from the first moment: a Ctrl-C during startup must still stop the
      // children, which are outside the terminal's process group.
      const stopped = runUntilSignal(() => cluster.stop());
      process.once('exit', () => cluster.abandon());
      try {
        await cluster.start();
      } catch (e) {
        if (!cluster.stopping) {
          await cluster.stop();
          throw e;
        }
      }
      await stopped;
      console.error(cluster.stoppedLine());
    });
}

class LocalCluster {
  stopping = false;
  private manager: SupervisedChild | undefined;
  private readonly agents: SupervisedChild[] = [];
  private readonly started = performance.now();

  constructor(private readonly opts: ClusterOptions) {}

  async start(): Promise<void> {
    const { home } = this.opts;
    const count = Number(this.opts.agents);
    this.manager = new SupervisedChild(
      'manager',
      ['manager', '--listen', `127.0.0.1:${Number(this.opts.port)}`, '--home', home],
      { LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn', ...demoSourceEnv() },
    );
    const ready = await this.manager.waitForLine(/^manager: (\S+) /, MANAGER_READY_TIMEOUT_MS);
    const url = ready[1]!;
    const password = (await readFile(adminPasswordPath({ FREELOADER_HOME: home }), 'utf8')).trim();

    const admin = new ManagerClient(url);
    try {
      const session = await admin.request<LoginResponse>('POST', '/auth/login', {
        username: 'admin',
        password,
      });
      admin.setCredentials({ kind: 'user', token: session.token });
      await this.startAgents(admin, url, count);
      await this.waitForAgents(admin, count);
    } finally {
      await admin.close();
    }

    const hasConsole = await consoleServed(url);
    const seconds = ((performance.now() - this.started) / 1000).toFixed(1);
    console.log(
      [
        '',
        `FreeLoader local cluster is up (${count} agents, ready in ${seconds} s)`,
        hasConsole ? `  console:  ${url}/` : '  console:  not built (`npm run build` builds it)',
        `  API docs: ${url}/docs`,
        // A redirected log keeps what it is given: the password only on a terminal.
        process.stdout.isTTY
          ? `  admin:    user "admin", password "${password}"`
          : `  admin:    user "admin", password in ${adminPasswordPath({ FREELOADER_HOME: home })}`,
        `  CLI:      FREELOADER_MANAGER=${url} npx freeloader ls`,
        this.opts.governor
          ? '  governor: agents throttle on machine load (--governor), also on one another'
          : '  governor: load throttling off, so the agents on this one machine do not throttle ' +
            'one another (--governor turns it on)',
        `  sources:  loopback sources are allowed for the demo (${SOURCE_ALLOW_ENV}=` +
          `${demoSourceEnv()[SOURCE_ALLOW_ENV]}); a real manager refuses them unless an admin allows them`,
        'Press Ctrl-C to stop.',
      ].join('\n'),
    );
  }

  private async startAgents(admin: ManagerClient, url: string, count: number): Promise<void> {
    const dirs = Array.from({ length: count }, (_, i) =>
      join(this.opts.home, 'cluster', `agent-${i + 1}`),
    );
    const newcomers = dirs.filter((d) => !existsSync(identityPath(d))).length;
    // Agents enrolled on an earlier run reuse their identity; only newcomers need a token.
    const token =
      newcomers > 0
        ? (
            await admin.request<JoinTokenCreated>('POST', '/tokens', {
              maxUses: newcomers,
              ttlSeconds: 3600,
              note: 'local cluster',
            })
          ).token
        : undefined;
    const basePort = Number(this.opts.agentBasePort);
    for (const [i, dir] of dirs.entries()) {
      if (this.stopping) return;
      const name = `agent-${i + 1}`;
      const args = [
        'agent',
        ...['--manager', url, '--dir', dir, '--quota', this.opts.quota, '--name', name],
        ...['--listen', `127.0.0.1:${basePort === 0 ? 0 : basePort + i}`],
      ];
      // The token goes by environment: a command line is visible to every user of the machine.
      this.agents.push(
        new SupervisedChild(
          name,
          args,
          {
            LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
            ...agentGovernorEnv(this.opts.governor),
            ...demoSourceEnv(),
            ...(token ? { FREELOADER_JOIN_TOKEN: token } : {}),
          },
          AGENT_NODE_FLAGS,
        ),
      );
    }
  }

  private async waitForAgents(admin: ManagerClient, count: number): Promise<void> {
    const deadline = performance.now() + AGENTS_READY_TIMEOUT_MS;
    for (;;) {
      if (this.stopping) throw new Error('stopped while starting');
      const dead = this.agents.find((a) => !a.running);
      if (dead) {
        throw new Error(
          `${dead.name} exited (${dead.exitText()}); its last output:\n${dead.tail()}`,
        );
      }
      const agents = await admin.request<AgentView[]>('GET', '/agents');
      const live = agents.filter((a) => a.state === 'live').length;
      if (live >= count) return;
      if (performance.now() > deadline) {
        throw new Error(`only ${live} of ${count} agents came up; see the agent logs above`);
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  /** Agents first (they may still report to the manager), then the manager. Idempotent. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.agents.map((a) => a.stop(AGENT_STOP_GRACE_MS)));
    await this.manager?.stop(MANAGER_STOP_GRACE_MS);
  }

  /** The cluster's last line: whether every part exited cleanly once stop() is done. */
  stoppedLine(): string {
    const parts = [...this.agents, this.manager].filter((c) => c !== undefined);
    const unclean = parts.filter((c) => c.child.exitCode !== 0).map((c) => c.name);
    return unclean.length === 0
      ? `cluster stopped (manager and ${this.agents.length} agent${this.agents.length === 1 ? '' : 's'})`
      : `cluster stopped; ${unclean.join(', ')} did not exit cleanly (see above)`;
  }

  /** Last resort when this process exits without stop(): ask every child to stop on its own. */
  abandon(): void {
    for (const c of [...this.agents, this.manager]) if (c?.running) c.child.kill('SIGTERM');
  }
}

/** The manager serves the console once it is built (`npm run build`). */
async function consoleServed(url: string): Promise<boolean> {
  const res = await fetch(`${url}/`).catch(() => null);
  await res?.body?.cancel();
  return res?.ok === true;
}
