import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import {
  FreeLoaderError,
  type DatasetView,
  type ImportRequest,
  type ImportResponse,
} from '@freeloader/protocol';
import type { Config } from '@freeloader/manager';
import { getDataset, type GetSummary } from '../client/get-dataset.js';
import {
  spawnAgent,
  startTestManager,
  waitFor,
  waitForAgentState,
  type SpawnedAgent,
  type TestManager,
} from './cluster-harness.js';

/**
 * Upper bound for an import to settle (ms), not a target: a 96 MiB two-copy import on three
 * donors took over 60 s at load average 30 on 2 cores. Tests' own timeouts stay the limit.
 */
const IMPORT_SETTLE_BOUND_MS = 150_000;

export interface DataCluster {
  tm: TestManager;
  agents: SpawnedAgent[];
  agentDirs: string[];
  /** Import through the API; resolves with the dataset once it is ready or failed. */
  importAndWait(req: ImportRequest): Promise<DatasetView>;
  /** `freeloader get` through the client library; returns the SHA-256 of what came out. */
  get(
    dataset: string,
    opts?: { onMorsel?: (n: number) => void },
  ): Promise<GetSummary & { sha256: string }>;
  close(): Promise<void>;
}

/**
 * A manager plus `donors` real agent processes, enrolled and live, for data-path tests.
 *
 * @example const c = await startDataCluster(3, '64MiB'); const d = await c.importAndWait({ uri });
 */
export async function startDataCluster(
  donors: number,
  quota: string,
  opts: {
    /** Manager settings for this cluster (e.g. short repair thresholds). */
    manager?: Partial<Config>;
    agentArgs?: (i: number) => readonly string[];
    /** Source allow list of the manager and agents (default: the kits' loopback allowance). */
    sourceAllow?: readonly string[];
  } = {},
): Promise<DataCluster> {
  const sourceEnv =
    opts.sourceAllow === undefined
      ? {}
      : { env: { FREELOADER_SOURCE_ALLOW: opts.sourceAllow.join(',') } };
  const tm = await startTestManager({
    ...opts.manager,
    ...(opts.sourceAllow === undefined ? {} : { sourceAllow: [...opts.sourceAllow] }),
  });
  const root = await mkdtemp(join(tmpdir(), 'fl-data-'));
  const agents: SpawnedAgent[] = [];
  const agentDirs = Array.from({ length: donors }, (_, i) => join(root, `agent-${i + 1}`));
  try {
    const { token } = await tm.createJoinToken({ maxUses: donors });
    for (const [i, dir] of agentDirs.entries()) {
      agents.push(
        await spawnAgent({
          managerUrl: tm.url,
          token,
          dir,
          quota,
          name: `donor-${i + 1}`,
          extraArgs: opts.agentArgs?.(i) ?? [],
          ...sourceEnv,
        }),
      );
    }
    await Promise.all(agents.map((a) => waitForAgentState(tm, a.agentId, 'live')));
  } catch (e) {
    await Promise.all(agents.map((a) => a.stop('SIGKILL')));
    await tm.close();
    throw e;
  }

  const importAndWait = async (req: ImportRequest): Promise<DatasetView> => {
    const res = await tm.admin.request<ImportResponse>('POST', '/datasets', req);
    if (!res.dataset) throw new Error('dry run');
    const id = res.dataset.id;
    return waitFor(
      `dataset ${id} to settle`,
      async () => {
        const d = await tm.admin.request<DatasetView>('GET', `/datasets/${id}`);
        return d.state === 'ready' || d.state === 'failed' ? d : undefined;
      },
      IMPORT_SETTLE_BOUND_MS,
      100,
    );
  };

  const get: DataCluster['get'] = async (dataset, opts = {}) => {
    const hash = createHash('sha256');
    let morsels = 0;
    const sink = new Writable({
      write(chunk: Buffer, _enc, cb) {
        hash.update(chunk);
        opts.onMorsel?.(++morsels);
        cb();
      },
    });
    const summary = await getDataset({ manager: tm.admin, dataset, sink });
    return { ...summary, sha256: hash.digest('hex') };
  };

  return {
    tm,
    agents,
    agentDirs,
    importAndWait,
    get,
    async close() {
      await Promise.all(agents.map((a) => a.stop('SIGKILL')));
      await tm.close();
      await rm(root, { recursive: true, force: true });
    },
  };
}

export function sha256Hex(data: Buffer): string {
  return createHash('sha256').update(data).digest('hex');
}

/** Expect a promise to reject with a FreeLoaderError of `code`; returns it. */
export async function rejectsWith(p: Promise<unknown>, code: string): Promise<FreeLoaderError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof FreeLoaderError && e.code === code) return e;
    throw e;
  }
  throw new Error(`expected ${code}`);
}
