import { createHash, randomBytes, type KeyObject } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlacement } from '@freeloader/manager/testing';
import { MORSEL_HASH_HEADER, signCapability, type CapabilityOp } from '@freeloader/protocol';
import {
  internalsOf,
  killSpawned,
  spawnAgent,
  startTestManager,
  TEST_TIMINGS,
  waitFor,
  waitForAgentState,
  type SpawnedAgent,
  type TestManager,
} from '../test/cluster-harness.js';

const MORSEL_SIZE = 64 * 1024;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Reads never need the manager: a donor keeps serving the morsels it holds while the manager is
 * down (capabilities are verified locally) and reconnects when the manager is back.
 */
describe('manager down → agent keeps serving', { timeout: 180_000 }, () => {
  let tm: TestManager;
  let work: string;
  let agent: SpawnedAgent;
  let signingKey: KeyObject;

  beforeAll(async () => {
    work = await mkdtemp(join(tmpdir(), 'fl-agent-offline-'));
    tm = await startTestManager();
    const { token } = await tm.createJoinToken();
    agent = await spawnAgent({ managerUrl: tm.url, token, dir: join(work, 'a'), quota: '16MiB' });
    await waitForAgentState(tm, agent.agentId, 'live');
    // Kept here: the test signs capabilities while the manager is down.
    signingKey = internalsOf(tm.manager).signingKeys.privateKey;
  }, 180_000);

  afterAll(async () => {
    await killSpawned();
    await tm?.close();
    await rm(work, { recursive: true, force: true });
  });

  function capability(datasetId: string, ops: CapabilityOp[]): string {
    return signCapability(signingKey, {
      ds: datasetId,
      ops,
      sub: 'agent-offline-test',
      aud: [agent.agentId],
      exp: Math.floor(Date.now() / 1000) + 600,
    });
  }

  /** Register a one-morsel dataset placed on the agent and PUT its morsel there. */
  async function placeMorsel(path: string): Promise<{ id: string; url: string; bytes: Buffer }> {
    const { pg, namespaceRepo } = internalsOf(tm.manager);
    const ds = await namespaceRepo.createDataset({
      path,
      sizeBytes: MORSEL_SIZE,
      morselSize: MORSEL_SIZE,
      state: 'importing',
    });
    const donors = [agent.agentId];
    await setPlacement(pg, ds.id, [{ copy: 0, first: 0, count: 1, unit: 1, phase: 0, donors }]);
    const bytes = randomBytes(MORSEL_SIZE);
    const url = `${agent.url}/v1/morsels/${ds.id}/0`;
    // The agent declares the dataset on this first PUT by asking the manager (prepareDataset).
    const put = await fetch(url, {
      method: 'PUT',
      headers: {
        authorization: `Bearer ${capability(ds.id, ['write'])}`,
        'content-type': 'application/octet-stream',
      },
      body: bytes,
    });
    expect(put.status, await put.text()).toBe(204);
    await namespaceRepo.setState(ds.id, 'ready');
    return { id: ds.id, url, bytes };
  }

  async function readMorsel(m: { id: string; url: string }): Promise<[number, Buffer]> {
    const res = await fetch(m.url, {
      headers: { authorization: `Bearer ${capability(m.id, ['read'])}` },
    });
    const body = Buffer.from(await res.arrayBuffer());
    if (res.ok) {
      // The hash recorded at PUT comes back with the bytes.
      expect(res.headers.get(MORSEL_HASH_HEADER)).toBe(
        createHash('sha256').update(body).digest('hex'),
      );
    }
    return [res.status, body];
  }

  it('serves held morsels while the manager is down, across a restart, then goes live again', async () => {
    const kept = await placeMorsel('it/kept.bin');
    const orphan = await placeMorsel('it/orphan.bin');
    // The manager stops placing the orphan here: the agent frees it when it next reconciles.
    await setPlacement(internalsOf(tm.manager).pg, orphan.id, []);

    await tm.stop();
    await waitFor('the agent to report offline', () =>
      /agent: offline/.test(agent.stderr()) ? true : undefined,
    );
    await sleep(TEST_TIMINGS.heartbeatIntervalMs * 3);
    expect(await readMorsel(kept)).toEqual([200, kept.bytes]);
    const health = await fetch(`${agent.url}/v1/health`);
    expect(await health.json()).toMatchObject({ ok: true, agentId: agent.agentId });
    // The manager's absence opens nothing: no capability, no morsel.
    expect((await fetch(kept.url)).status).toBe(401);

    // Restart the agent with the manager still down: identity and store come from disk.
    expect(await agent.stop()).toBe(0);
    const listen = new URL(agent.url).host;
    agent = await spawnAgent({ managerUrl: tm.url, dir: join(work, 'a'), listen });
    expect(await readMorsel(kept)).toEqual([200, kept.bytes]);
    await waitFor('the restarted agent to report offline', () =>
      /agent: offline/.test(agent.stderr()) ? true : undefined,
    );

    // A new manager on the same home and port: the agent reconnects with its identity and
    // reconciles its store against the manager's placement.
    await tm.start();
    await waitForAgentState(tm, agent.agentId, 'live', 30_000);
    // The manager marks the agent live on receiving the heartbeat; the agent prints "online"
    // only when the answer comes back, a moment later.
    await waitFor('the agent to print online', () =>
      /agent: offline[\s\S]*agent: online/.test(agent.stderr()) ? true : undefined,
    );
    expect(await tm.agents()).toHaveLength(1);
    await waitFor('the orphan to be freed', async () =>
      (await readMorsel(orphan))[0] === 404 ? true : undefined,
    );
    expect(await readMorsel(kept)).toEqual([200, kept.bytes]);
    expect(await agent.stop()).toBe(0);
  });
});
