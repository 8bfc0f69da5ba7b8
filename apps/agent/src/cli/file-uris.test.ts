import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetView, ImportResponse } from '@freeloader/protocol';
import {
  killSpawned,
  spawnAgent,
  startTestManager,
  waitFor,
  waitForAgentState,
  type TestManager,
} from '../test/cluster-harness.js';

/**
 * The admin opt-in for file:// sources is one variable for the whole cluster: the manager reads
 * it from its config, and `freeloader agent` from its environment, so a manager that accepts a
 * file:// import never hands it to donors that refuse it.
 */
describe('FREELOADER_ALLOW_FILE_URIS on the manager and its agents', { timeout: 120_000 }, () => {
  let tm: TestManager;
  let root = '';

  beforeAll(async () => {
    tm = await startTestManager({ allowFileUris: true });
    root = await mkdtemp(join(tmpdir(), 'fl-file-uris-'));
  }, 60_000);
  afterAll(async () => {
    await killSpawned();
    await tm?.close();
    if (root) await rm(root, { recursive: true, force: true });
  });

  it('imports a file:// source when the agents were started with it', async () => {
    const { token } = await tm.createJoinToken({ maxUses: 1 });
    const agent = await spawnAgent({
      managerUrl: tm.url,
      token,
      dir: join(root, 'agent'),
      quota: '16MiB',
      env: { FREELOADER_ALLOW_FILE_URIS: 'true' },
      timeoutMs: 60_000,
    });
    await waitForAgentState(tm, agent.agentId, 'live', 60_000);
    const file = join(root, 'local.bin');
    await writeFile(file, Buffer.alloc(3 * 1024 * 1024 + 7, 0x5a));
    // On a loaded machine the test timings can let a heartbeat slip past "live" for a moment.
    const res = await waitFor(
      'the manager to accept the import',
      () =>
        tm.admin
          .request<ImportResponse>('POST', '/datasets', {
            uri: pathToFileURL(file).href,
            name: 'local.bin',
          })
          .catch((e: unknown) => {
            if (/no live donor/.test(String(e))) return undefined;
            throw e;
          }),
      60_000,
      200,
    );
    const done = await waitFor(
      'the file:// import to settle',
      async () => {
        const d = await tm.admin.request<DatasetView>('GET', `/datasets/${res.dataset!.id}`);
        return d.state === 'ready' || d.state === 'failed' ? d : undefined;
      },
      90_000,
      200,
    );
    expect(done.error ?? null).toBeNull();
    expect(done.state).toBe('ready');
  });
});
