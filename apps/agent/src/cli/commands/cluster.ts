import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { type AgentView, type JoinTokenCreated, type LoginResponse } from '@freeloader/protocol';
import { identityPath } from '../../daemon/identity.js';
import { ManagerClient } from '../../manager-client.js';
import { adminPasswordPath, freeloaderHome } from '../paths.js';
import { runUntilSignal } from '../run-until-signal.js';

/** How long the cluster waits for every agent to heartbeat before giving up (milliseconds). */
const AGENTS_READY_TIMEOUT_MS = 45_000;
/** Grace period for an agent to exit on SIGTERM before it is killed (milliseconds). */
const AGENT_STOP_GRACE_MS = 10_000;

interface ClusterOptions {
  agents: string;
  quota: string;
  port: string;
  agentBasePort: string;
  home: string;
}

/**
 * `freeloader cluster` (what `npm start` runs): a manager on embedded PostgreSQL plus N agent
 * processes with their own stores, all on loopback; Ctrl-C stops everything.
 */
export function registerCluster(program: Command): void {
  program
    .command('cluster')
    .description('run a local cluster: manager + N donor agents on this machine')
    .option('--agents <n>', 'number of donor agents', '3')
    .option('--quota <size>', 'quota of each agent', '2GiB')
    .option('--port <port>', 'manager port', '7400')
    .option('--agent-base-port <port>', 'first agent port (agents use consecutive ports)', '7411')
    .option('--home <dir>', 'FreeLoader home for the cluster', freeloaderHome())
    .action(async (opts: ClusterOptions) => {
      const started = performance.now();
      const { startManager } = await import('@freeloader/manager');
      const manager = await startManager({
        home: opts.home,
        host: '127.0.0.1',
        port: Number(opts.port),
        logLevel: process.env.LOG_LEVEL ?? 'warn',
      });
      const children: ChildProcess[] = [];
      const stopAll = async (): Promise<void> => {
        await Promise.all(children.map(stopChild));
        await manager.close();
      };
      try {
        const password =
          manager.adminPassword ??
          (await readFile(adminPasswordPath({ FREELOADER_HOME: opts.home }), 'utf8')).trim();
        const admin = new ManagerClient(manager.url);
        const session = await admin.request<LoginResponse>('POST', '/auth/login', {
          username: 'admin',
          password,
        });
        admin.setCredentials({ kind: 'user', token: session.token });

        const count = Number(opts.agents);
        const dirs = Array.from({ length: count }, (_, i) =>
          join(opts.home, 'cluster', `agent-${i + 1}`),
        );
        const needToken = dirs.some((d) => !existsSync(identityPath(d)));
        const token = needToken
          ? (
              await admin.request<JoinTokenCreated>('POST', '/tokens', {
                maxUses: count,
                ttlSeconds: 3600,
                note: 'local cluster',
              })
            ).token
          : undefined;

        dirs.forEach((dir, i) => {
          const args = [
            'agent',
            '--manager',
            manager.url,
            '--dir',
            dir,
            '--quota',
            opts.quota,
            '--listen',
            `127.0.0.1:${Number(opts.agentBasePort) + i}`,
            '--name',
            `agent-${i + 1}`,
            ...(token ? ['--token', token] : []),
          ];
          children.push(spawnAgent(`agent-${i + 1}`, args));
        });

        await waitForAgents(admin, count);
        await admin.close();
        const seconds = ((performance.now() - started) / 1000).toFixed(1);
        console.log(
          [
            '',
            `FreeLoader local cluster is up (${count} agents, ready in ${seconds} s)`,
            `  console:  ${manager.url}/`,
            `  API docs: ${manager.url}/docs`,
            `  admin:    user "admin", password "${password}"`,
            `  CLI:      FREELOADER_MANAGER=${manager.url} freeloader ls`,
            'Press Ctrl-C to stop.',
          ].join('\n'),
        );
      } catch (e) {
        await stopAll();
        throw e;
      }
      await runUntilSignal(stopAll);
    });
}

function spawnAgent(name: string, args: string[]): ChildProcess {
  const main = fileURLToPath(new URL('../main.js', import.meta.url));
  const child = spawn(process.execPath, [main, ...args], {
    stdio: ['ignore', 'inherit', 'pipe'],
    env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' },
  });
  // Agents' stderr carries their logs; prefix it so interleaved lines stay readable.
  createInterface({ input: child.stderr! }).on('line', (line) =>
    console.error(`[${name}] ${line}`),
  );
  child.on('exit', (code, signal) => {
    if (code !== 0 && signal !== 'SIGTERM') console.error(`[${name}] exited (${signal ?? code})`);
  });
  return child;
}

async function waitForAgents(admin: ManagerClient, count: number): Promise<void> {
  const deadline = performance.now() + AGENTS_READY_TIMEOUT_MS;
  for (;;) {
    const agents = await admin.request<AgentView[]>('GET', '/agents');
    if (agents.filter((a) => a.state === 'live').length >= count) return;
    if (performance.now() > deadline) {
      throw new Error(`only ${agents.length} of ${count} agents came up; see the agent logs above`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
}

function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), AGENT_STOP_GRACE_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
