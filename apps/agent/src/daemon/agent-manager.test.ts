import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnrollResponse } from '@freeloader/protocol';
import {
  internalsOf,
  killSpawned,
  runCli,
  spawnAgent,
  startTestManager,
  TEST_TIMINGS,
  waitForAgentState,
  type TestManager,
} from '../test/cluster-harness.js';
import { identityPath, type Identity } from '../state/identity.js';

const MiB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The agent daemon as a real `freeloader agent` process against a real manager on loopback:
 * enrollment, refused tokens, heartbeats and soft state, restarts.
 */
describe('agent ↔ manager over loopback', () => {
  let tm: TestManager;
  let work: string;
  let seq = 0;
  const stateDir = () => join(work, `agent-${++seq}`);

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'fl-agent-state-'));
    tm = await startTestManager();
  }, 180_000);

  afterAll(async () => {
    await killSpawned();
    await tm?.close();
    await rm(work, { recursive: true, force: true });
  });

  it('enrolls with a join token: live with its quota, identity 0600, secrets never logged', async () => {
    const { token } = await tm.createJoinToken();
    const dir = stateDir();
    const agent = await spawnAgent({ managerUrl: tm.url, token, dir, quota: '64MiB', name: 'e1' });

    const view = await waitForAgentState(tm, agent.agentId, 'live');
    expect(view).toMatchObject({ name: 'e1', quotaBytes: 64 * MiB, url: agent.url });
    expect((await stat(identityPath(dir))).mode & 0o777).toBe(0o600);
    const identity = JSON.parse(await readFile(identityPath(dir), 'utf8')) as Identity;
    expect(identity.agentId).toBe(agent.agentId);

    expect(await agent.stop()).toBe(0);
    expect(agent.stderr()).toContain('"msg":"enrolled"');
    expect(agent.stderr()).not.toContain(identity.credential);
    expect(agent.stderr()).not.toContain(token);
  });

  const refusals: [string, () => Promise<string>][] = [
    ['JOIN_TOKEN_INVALID', async () => 'flj_no-such-token-0123456789abcdef'],
    [
      'JOIN_TOKEN_EXPIRED',
      async () => {
        const t = await tm.createJoinToken();
        await internalsOf(tm.manager).pg.query(
          "UPDATE join_tokens SET expires_at = now() - interval '1 second' WHERE id = $1",
          [t.id],
        );
        return t.token;
      },
    ],
    [
      'JOIN_TOKEN_USED',
      async () => {
        const t = await tm.createJoinToken({ maxUses: 1 });
        // The first agent spends the only use.
        await tm.admin.request<EnrollResponse>('POST', '/agents/enroll', {
          token: t.token,
          name: 'first',
          url: 'http://127.0.0.1:9',
          quotaBytes: MiB,
        });
        return t.token;
      },
    ],
  ];

  it.each(refusals)('refuses a bad join token with one line: %s', async (code, tokenFor) => {
    const token = await tokenFor();
    const dir = stateDir();
    const before = (await tm.agents()).length;
    const res = await runCli(
      ['agent', '--manager', tm.url, '--token', token, '--dir', dir, '--quota', '8MiB'],
      { LOG_LEVEL: 'warn' },
    );
    expect(res.code).toBe(1);
    expectOneErrorLine(res.stderr, code);
    expect(await readFile(identityPath(dir)).catch(() => null)).toBeNull();
    expect(await tm.agents()).toHaveLength(before);
  });

  it('refuses a quota larger than the disk: QUOTA_EXCEEDS_DISK', async () => {
    const { token } = await tm.createJoinToken();
    const res = await runCli(
      ['agent', '--manager', tm.url, '--token', token, '--dir', stateDir(), '--quota', '1000TiB'],
      { LOG_LEVEL: 'warn' },
    );
    expect(res.code).toBe(1);
    expectOneErrorLine(res.stderr, 'QUOTA_EXCEEDS_DISK');
    expect(res.stderr).toMatch(/quota 1000 TiB is larger than the free disk space/);
  });

  it('a SIGKILLed agent goes stale, then dead; restarted, it heartbeats live again', async () => {
    const { token } = await tm.createJoinToken();
    const dir = stateDir();
    const first = await spawnAgent({ managerUrl: tm.url, token, dir, quota: '16MiB' });
    const id = first.agentId;
    await waitForAgentState(tm, id, 'live');
    // Live for longer than staleAfterMs: only heartbeats can keep it so.
    await sleep(TEST_TIMINGS.staleAfterMs * 1.5);
    expect(await stateOf(id)).toBe('live');

    expect(await first.stop('SIGKILL')).toBeNull();
    const killedAt = performance.now();
    const stale = await waitForAgentState(tm, id, 'stale', TEST_TIMINGS.deadAfterMs * 3);
    const staleAfter = performance.now() - killedAt;
    const dead = await waitForAgentState(tm, id, 'dead', TEST_TIMINGS.deadAfterMs * 3);
    const { staleAfterMs, deadAfterMs } = TEST_TIMINGS;
    // The manager's own account of the silence matches the state it derives from it...
    expect(stale.lastHeartbeatAgoMs).toBeGreaterThanOrEqual(staleAfterMs);
    expect(stale.lastHeartbeatAgoMs).toBeLessThan(deadAfterMs);
    expect(dead.lastHeartbeatAgoMs).toBeGreaterThanOrEqual(deadAfterMs);
    // ...and stale is a timeout, not a reaction to the dropped connection. (Loose bound: under
    // load the last beat may come late, some time before the kill.)
    expect(staleAfter).toBeGreaterThanOrEqual(staleAfterMs / 2);

    const again = await spawnAgent({ managerUrl: tm.url, dir });
    expect(again.agentId).toBe(id);
    // Back from dead (the next test shows it also stays live after a restart).
    await waitForAgentState(tm, id, 'live');
    expect(await again.stop()).toBe(0);
  });

  it('a restart keeps its identity: clean SIGTERM, no token needed, still one agent', async () => {
    const { token } = await tm.createJoinToken();
    const dir = stateDir();
    const first = await spawnAgent({ managerUrl: tm.url, token, dir, quota: '16MiB', name: 'r1' });
    await waitForAgentState(tm, first.agentId, 'live');
    const count = (await tm.agents()).length;
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.stderr()).toMatch(/agent: stopped/);

    // No --token and no --quota: both come from the state directory.
    const second = await spawnAgent({ managerUrl: tm.url, dir, name: 'r1' });
    expect(second.agentId).toBe(first.agentId);
    const view = await waitForAgentState(tm, second.agentId, 'live');
    expect(view.quotaBytes).toBe(16 * MiB);
    expect(await tm.agents()).toHaveLength(count);
    expect((await tm.agents()).filter((a) => a.name === 'r1')).toHaveLength(1);
    // Heartbeats keep the manager's interval after a restart (no enrollment to learn it from).
    await sleep(TEST_TIMINGS.staleAfterMs * 1.5);
    expect(await stateOf(second.agentId)).toBe('live');
    expect(await second.stop()).toBe(0);
  });

  async function stateOf(id: string): Promise<string | undefined> {
    return (await tm.agents()).find((a) => a.id === id)?.state;
  }
});

/** The CLI's error contract: exactly one `error: … [CODE]` line and no stack trace. */
function expectOneErrorLine(stderr: string, code: string): void {
  const errors = stderr.split('\n').filter((l) => l.startsWith('error:'));
  expect(errors, stderr).toHaveLength(1);
  expect(errors[0]).toMatch(new RegExp(`^error: \\S.* \\[${code}\\]$`));
  expect(stderr).not.toMatch(/^\s+at /m);
}
