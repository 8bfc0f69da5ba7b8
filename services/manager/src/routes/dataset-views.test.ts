import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setPlacement } from '../repositories/placement.js';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
let user: string;
let dsId: string;
const agentIds: string[] = [];
beforeAll(async () => {
  h = await startHarness();
  // The reader owns the datasets: lists and views show only what a user may read.
  const reader = await h.login('scientist');
  user = reader.authorization;
  for (const path of ['climate/tas_2020.nc', 'climate/pr_2020.nc', 'genomics/100%_reads.bam']) {
    await h.app.namespaceRepo.createDataset({
      path,
      sizeBytes: 5 * 1048576 + 7,
      sourceUri: `http://x/${path}`,
      ownerId: reader.userId,
    });
  }
  dsId = (await h.app.namespaceRepo.getByPath('climate/tas_2020.nc'))!.id;
  for (const name of ['alpha', 'beta']) agentIds.push((await h.enroll({ name })).agentId);
  await setPlacement(h.app.pg, dsId, [
    { copy: 0, first: 0, count: 6, unit: 1, phase: 0, donors: agentIds },
  ]);
});
afterAll(async () => {
  await h?.close();
});

const get = (url: string, authorization = user) =>
  h.call({ method: 'GET', url, headers: authorization ? { authorization } : {} });
const paths = (body: { path: string }[]) => body.map((d) => d.path);

describe('dataset search', () => {
  it.each<[string, string[]]>([
    ['', ['climate/pr_2020.nc', 'climate/tas_2020.nc', 'genomics/100%_reads.bam']],
    ['?query=CLIMATE', ['climate/pr_2020.nc', 'climate/tas_2020.nc']],
    ['?query=tas', ['climate/tas_2020.nc']],
    ['?query=100%25', ['genomics/100%_reads.bam']],
    ['?query=%25', ['genomics/100%_reads.bam']],
    ['?query=_r', ['genomics/100%_reads.bam']],
    ['?query=nothing', []],
    ['?limit=1', ['climate/pr_2020.nc']],
  ])('GET /datasets%s', async (qs, expected) => {
    const res = await get(`/api/v1/datasets${qs}`);
    expect(res.statusCode).toBe(200);
    expect(paths(res.json())).toEqual(expected);
  });

  it('counts the donors holding each dataset', async () => {
    const res = await get('/api/v1/datasets?query=2020');
    const byPath = Object.fromEntries(
      res.json<{ path: string; donorCount: number }[]>().map((d) => [d.path, d.donorCount]),
    );
    expect(byPath).toEqual({ 'climate/pr_2020.nc': 0, 'climate/tas_2020.nc': 2 });
  });

  it('needs a signed-in user', async () => {
    expect((await get('/api/v1/datasets', '')).statusCode).toBe(401);
  });
});

describe('dataset placement and throughput', () => {
  it('shows extents and named donors without touching last access', async () => {
    const res = await get(`/api/v1/datasets/${dsId}/placement`);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ datasetId: dsId, morsels: 6, morselSize: 1048576 });
    expect(body.extents[0].donors).toEqual(agentIds);
    expect(body.donors.map((d: { name: string }) => d.name).sort()).toEqual(['alpha', 'beta']);
    expect(body).not.toHaveProperty('capability');
    expect((await h.app.namespaceRepo.get(dsId))!.lastAccessAt).toBeNull();
  });

  it('returns the throughput the event bus reported', async () => {
    h.app.events.publish({
      type: 'transfer',
      jobId: '33333333-3333-4333-8333-333333333333',
      datasetId: dsId,
      agentId: agentIds[0]!,
      state: 'running',
      doneBytes: 1048576,
      totalBytes: 3 * 1048576,
      rate: 2e6,
      error: null,
    });
    const res = await get(`/api/v1/datasets/${dsId}/throughput`);
    expect(res.json().samples).toMatchObject([{ rate: 2e6, doneBytes: 1048576 }]);
  });

  it.each(['placement', 'throughput'])('answers 404 for an unknown dataset (%s)', async (what) => {
    const res = await get(`/api/v1/datasets/44444444-4444-4444-8444-444444444444/${what}`);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('DATASET_NOT_FOUND');
  });
});
