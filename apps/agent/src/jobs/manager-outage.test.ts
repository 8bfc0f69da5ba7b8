import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  KiB,
  MiB,
  type DatasetView,
  type ImportResponse,
  type LoginResponse,
  type TransferView,
} from '@freeloader/protocol';
import { generateContent, startTestServer, type TestServer } from '@freeloader/sources/testing';
import { parsePrometheusText, type MetricFamily } from '@freeloader/manager/testing';
import { internalsOf, waitFor, waitForAgentState } from '../test/cluster-harness.js';
import { spawnCli } from '../test/processes.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';

// A manager that goes away while a real donor imports (issue 16): the donor keeps the outcome of
// its job until the manager is back, and `import --wait` rides the outage out.
let c: DataCluster;
const sources: TestServer[] = [];

beforeAll(async () => {
  c = await startDataCluster(1, '64MiB');
}, 180_000);

afterAll(async () => {
  await Promise.all(sources.map((s) => s.close()));
  await c?.close();
});

const reportsDir = () => join(c.agentDirs[0]!, 'job-reports');
const pendingReports = async () =>
  (await readdir(reportsDir()).catch(() => [])).filter((f) => f.endsWith('.json'));

async function slowSource(seed: number): Promise<TestServer> {
  // Still running when the manager goes down, on any load: the first morsels take 2 s each (a
  // progress report, due after 500 ms, goes out with the first stored) and the second half is
  // held until the test lets it go.
  const src = await startTestServer({
    size: 8 * MiB + 321,
    seed,
    bytesPerSecond: 512 * KiB,
    holdFrom: 4 * MiB,
  });
  sources.push(src);
  return src;
}

async function importRunning(id: string): Promise<void> {
  await waitFor(
    'the import job to have stored something',
    async () => {
      const rows = await c.tm.admin.request<TransferView[]>('GET', `/transfers?datasetId=${id}`);
      return rows.some((j) => j.state === 'running' && j.doneBytes > 0) ? true : undefined;
    },
    60_000,
    100,
  );
}

describe('a manager outage during an import', { timeout: 240_000 }, () => {
  it('applies a job failure reported while it was down once it is back', async () => {
    const src = await slowSource(61);
    const res = await c.tm.admin.request<ImportResponse>('POST', '/datasets', {
      uri: src.url,
      name: 'outage/fails.bin',
    });
    const id = res.dataset!.id;
    await importRunning(id);
    const reserved = async () =>
      (
        await internalsOf(c.tm.manager).pg.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM reservations WHERE dataset_id = $1 AND state = 'active'`,
          [id],
        )
      ).rows[0]!.n;
    expect(await reserved()).toBeGreaterThan(0);

    await c.tm.stop();
    // The source changes under the import: the donor's job fails with the manager away.
    src.set({ bytesPerSecond: undefined, holdFrom: undefined });
    src.setContent(generateContent(src.content.length, 6161));
    await waitFor(
      'the donor to keep its failure report on disk',
      async () => ((await pendingReports()).length > 0 ? true : undefined),
      60_000,
      100,
    );

    await c.tm.start();
    const failed = await waitFor(
      'the dataset to fail from the late report',
      async () => {
        const d = await c.tm.admin.request<DatasetView>('GET', `/datasets/${id}`);
        return d.state === 'failed' ? d : undefined;
      },
      60_000,
      100,
    );
    expect(failed.error).toBeTruthy();
    expect(await reserved()).toBe(0);
    await waitFor(
      'the donor to drop the delivered report',
      async () => ((await pendingReports()).length === 0 ? true : undefined),
      30_000,
      100,
    );
  });

  it('`import --wait` rides out a manager restart mid-import and exits 0', async () => {
    const src = await slowSource(62);
    // A restarted manager has not heard from the donor yet (see the test above).
    await waitForAgentState(c.tm, c.agents[0]!.agentId, 'live');
    const { token } = await c.tm.admin.request<LoginResponse>('POST', '/auth/login', {
      username: 'admin',
      password: c.tm.adminPassword,
    });
    const cli = spawnCli(
      ['import', src.url, '--name', 'outage/rides.bin', '--wait', '--manager', c.tm.url],
      { FREELOADER_TOKEN: token },
    );
    let stderr = '';
    cli.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
    cli.stdout!.resume();
    const code = new Promise<number | null>((r) => cli.once('close', r));

    const dataset = await waitFor(
      'the import to start',
      () => {
        if (cli.exitCode !== null) throw new Error(`import exited early:\n${stderr}`);
        return c.tm.admin
          .request<DatasetView>('GET', '/datasets/by-path?path=outage%2Frides.bin')
          .catch(() => undefined);
      },
      60_000,
      100,
    );
    await importRunning(dataset.id);
    await c.tm.stop();
    await waitFor(
      'import --wait to notice the outage',
      () => (/manager unavailable/.test(stderr) ? true : undefined),
      60_000,
      100,
    );
    src.set({ bytesPerSecond: undefined, holdFrom: undefined });
    await c.tm.start();
    expect(await code, stderr).toBe(0);
    expect(stderr.match(/manager unavailable/g)).toHaveLength(1);
    expect(stderr).toMatch(/ready: /);
    expect((await c.get('outage/rides.bin')).sha256).toBe(sha256Hex(src.content));
  });
});

describe('/metrics after the outage', () => {
  const value = (families: MetricFamily[], name: string, labels?: Record<string, string>) => {
    const f = families.find((x) => x.name === name);
    const m = f?.metrics.find((x) =>
      Object.entries(labels ?? {}).every(([k, v]) => x.labels?.[k] === v),
    );
    if (!m?.value) throw new Error(`no ${name} ${JSON.stringify(labels ?? {})} in the scrape`);
    return Number(m.value);
  };
  const scrape = async (url: string) => {
    const res = await fetch(url);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(await res.text());
  };

  it('the agent and the manager answer the Prometheus text format', async () => {
    const src = await startTestServer({ size: 2 * MiB + 5, seed: 63 });
    sources.push(src);
    await waitForAgentState(c.tm, c.agents[0]!.agentId, 'live');
    expect((await c.importAndWait({ uri: src.url, name: 'metrics/read.bin' })).state).toBe('ready');
    expect((await c.get('metrics/read.bin')).sha256).toBe(sha256Hex(src.content));

    const agent = await scrape(`${c.agents[0]!.url}/metrics`);
    expect(value(agent, 'freeloader_agent_served_bytes_total')).toBeGreaterThanOrEqual(2 * MiB);
    expect(value(agent, 'freeloader_agent_job_reports_pending')).toBe(0);
    expect(value(agent, 'freeloader_agent_jobs_running')).toBe(0);
    expect(value(agent, 'freeloader_agent_store_bytes', { kind: 'quota' })).toBe(64 * MiB);
    expect(agent.find((f) => f.name === 'freeloader_agent_governor_state')?.metrics).toHaveLength(
      1,
    );
    expect(agent.some((f) => f.name === 'freeloader_agent_governor_cap_bytes_per_second')).toBe(
      true,
    );

    const manager = await scrape(`${c.tm.url}/metrics`);
    expect(value(manager, 'freeloader_heartbeats_total', { outcome: 'ok' })).toBeGreaterThan(0);
    expect(value(manager, 'freeloader_datasets', { state: 'ready' })).toBeGreaterThanOrEqual(1);
    expect(value(manager, 'freeloader_jobs', { kind: 'import', state: 'failed' })).toBe(1);
  });
});
