import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseJoinToken } from '@freeloader/protocol';
import {
  killSpawned,
  runCli,
  spawnAgent,
  startTestManager,
  TEST_TIMINGS,
  waitForAgentState,
  type TestManager,
} from '../test/cluster-harness.js';
import { identityPath, type Identity } from '../state/identity.js';
import type { SavedSession } from '../cli/session.js';

/** The one `error:` line a failed command prints, checked for its code. */
function oneErrorLine(stderr: string, code: string): string {
  const errors = stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(errors, stderr).toHaveLength(1);
  expect(errors[0]).toMatch(new RegExp(`\\[${code}\\]$`));
  return errors[0]!;
}

/**
 * The control plane over TLS with real processes: two managers with TLS forced on (on
 * loopback), each with its own CA; agents and the CLI pin the CA named by a join token or a
 * fingerprint.
 */
describe('agents and the CLI pin the manager CA', () => {
  let tm: TestManager;
  let other: TestManager;
  let work: string;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'fl-tls-agent-'));
    [tm, other] = await Promise.all([
      startTestManager({ tls: 'on' }),
      startTestManager({ tls: 'on' }),
    ]);
  }, 240_000);

  afterAll(async () => {
    await killSpawned();
    await Promise.all([tm?.close(), other?.close()]);
    await rm(work, { recursive: true, force: true });
  });

  it('enrolls over HTTPS with a token pinning the CA, keeps the CA, heartbeats over HTTPS across a restart', async () => {
    expect(tm.url).toMatch(/^https:/);
    const { token } = await tm.createJoinToken();
    expect(parseJoinToken(token).caFingerprint).toBe(tm.manager.caFingerprint);
    const dir = join(work, 'pinned');
    const agent = await spawnAgent({ managerUrl: tm.url, token, dir, quota: '16MiB' });
    await waitForAgentState(tm, agent.agentId, 'live');
    const identity = JSON.parse(await readFile(identityPath(dir), 'utf8')) as Identity;
    expect(identity.managerCa).toBe(tm.manager.caPem);
    expect(identity.managerUrl).toBe(tm.url);
    expect((await stat(identityPath(dir))).mode & 0o777).toBe(0o600);
    // Live for longer than staleAfterMs: only heartbeats, over HTTPS (the manager serves
    // nothing else), keep it so.
    await new Promise((r) => setTimeout(r, TEST_TIMINGS.staleAfterMs * 1.5));
    await waitForAgentState(tm, agent.agentId, 'live', 1_000);
    expect(await agent.stop()).toBe(0);

    // Restarted, it trusts the CA from its identity (no token any more).
    const again = await spawnAgent({ managerUrl: tm.url, dir });
    expect(again.agentId).toBe(agent.agentId);
    await waitForAgentState(tm, agent.agentId, 'live');
    expect(again.stderr()).not.toContain(identity.credential);
    expect(await again.stop()).toBe(0);
  }, 180_000);

  it('refuses a manager whose CA is not the one the token pins: CA_MISMATCH naming both fingerprints', async () => {
    const { token, id } = await tm.createJoinToken();
    const dir = join(work, 'impostor');
    const before = (await other.agents()).length;
    const res = await runCli(
      ['agent', '--manager', other.url, '--token', token, '--dir', dir, '--quota', '8MiB'],
      { LOG_LEVEL: 'warn' },
    );
    expect(res.code).toBe(1);
    const line = oneErrorLine(res.stderr, 'CA_MISMATCH');
    expect(line).toContain(`has CA fingerprint ${other.manager.caFingerprint}`);
    expect(line).toContain(`the join token pins ${tm.manager.caFingerprint}`);
    // Nothing was sent that could enroll: no identity here, no agent there, token unspent.
    expect(await readFile(identityPath(dir)).catch(() => null)).toBeNull();
    expect(await other.agents()).toHaveLength(before);
    const tokens = await tm.admin.request<{ id: string; uses: number }[]>('GET', '/tokens');
    expect(tokens.find((t) => t.id === id)?.uses).toBe(0);
  }, 120_000);

  it('the CLI logs in with --ca-fingerprint, saves the CA, and then talks HTTPS trusting only it', async () => {
    const home = join(work, 'cli-home');
    const env = {
      FREELOADER_HOME: home,
      FREELOADER_PASSWORD: tm.adminPassword,
      LOG_LEVEL: 'warn',
    };
    // Without a terminal and without a fingerprint: refused, with the fingerprint to check.
    const blind = await runCli(['login', '--manager', tm.url], env);
    expect(blind.code).toBe(1);
    expect(oneErrorLine(blind.stderr, 'CA_UNTRUSTED')).toContain(
      `--ca-fingerprint ${tm.manager.caFingerprint}`,
    );
    // The other manager's fingerprint: refused.
    const wrong = await runCli(
      ['login', '--manager', tm.url, '--ca-fingerprint', other.manager.caFingerprint],
      env,
    );
    expect(wrong.code).toBe(1);
    oneErrorLine(wrong.stderr, 'CA_MISMATCH');
    await expect(readFile(join(home, 'cli-session.json'))).rejects.toThrow();

    const login = await runCli(
      ['login', '--manager', tm.url, '--ca-fingerprint', tm.manager.caFingerprint],
      env,
    );
    expect(login.code, login.stderr).toBe(0);
    const session = JSON.parse(
      await readFile(join(home, 'cli-session.json'), 'utf8'),
    ) as SavedSession;
    expect(session.managerCa).toBe(tm.manager.caPem);
    const list = await runCli(['token', 'list', '--manager', tm.url], env);
    expect(list.code, list.stderr).toBe(0);

    // The saved CA is the only one trusted for that URL: a session whose CA is another
    // manager's fails on the certificate, clearly, before any token is sent.
    await writeFile(
      join(home, 'cli-session.json'),
      JSON.stringify({ ...session, managerCa: other.manager.caPem }),
    );
    const untrusted = await runCli(['token', 'list', '--manager', tm.url], env);
    expect(untrusted.code).toBe(1);
    expect(oneErrorLine(untrusted.stderr, 'CA_UNTRUSTED')).toContain(
      'presented a certificate this client does not trust',
    );
  }, 180_000);
});
