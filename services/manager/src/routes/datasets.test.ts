import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { verifyCapability } from '@freeloader/protocol';
import { putHashes, setPlacement } from '../repositories/placement.js';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
let user: string;
/** The datasets these tests make are the signed-in scientist's, as an import of theirs would be. */
let mine: { ownerId: string };
beforeAll(async () => {
  h = await startHarness();
  const login = await h.login('scientist');
  user = login.authorization;
  mine = { ownerId: login.userId };
});
afterAll(async () => {
  await h?.close();
});

const get = (url: string, authorization = user) =>
  h.call({ method: 'GET', url, headers: { authorization } });
const digest = (i: number) => createHash('sha256').update(String(i)).digest();

describe('namespace', () => {
  it('makes folders with mkdir -p and lists them with their datasets', async () => {
    const mk = await h.call({
      method: 'POST',
      url: '/api/v1/folders',
      headers: { authorization: user },
      payload: { path: 'climate/cmip6/tas' },
    });
    expect(mk.statusCode).toBe(201);
    expect(mk.json().path).toBe('climate/cmip6/tas');
    const again = await h.call({
      method: 'POST',
      url: '/api/v1/folders',
      headers: { authorization: user },
      payload: { path: 'climate/cmip6' },
    });
    expect(again.statusCode).toBe(201);
    await h.app.namespaceRepo.createDataset({ path: 'climate/cmip6/pr.nc', sizeBytes: 5, ...mine });

    const root = await get('/api/v1/namespace');
    expect(root.json()).toMatchObject({ path: '', folders: [{ path: 'climate' }], datasets: [] });
    const sub = await get('/api/v1/namespace?path=climate/cmip6');
    expect(sub.json().folders.map((f: { path: string }) => f.path)).toEqual(['climate/cmip6/tas']);
    expect(sub.json().datasets.map((d: { path: string }) => d.path)).toEqual([
      'climate/cmip6/pr.nc',
    ]);
  });

  it.each([
    ['GET', '/api/v1/namespace?path=no/such', 404, 'FOLDER_NOT_FOUND'],
    ['GET', '/api/v1/namespace?path=a/../b', 400, 'VALIDATION_FAILED'],
    ['POST', '/api/v1/folders', 400, 'VALIDATION_FAILED', { path: '/abs//x' }],
    ['POST', '/api/v1/folders', 409, 'ALREADY_EXISTS', { path: 'climate/cmip6/pr.nc/sub' }],
  ])('%s %s → %i %s', async (method, url, status, code, payload?: object) => {
    const res = await h.call({
      method: method,
      url,
      headers: { authorization: user },
      payload,
    });
    expect(res.statusCode).toBe(status);
    expect(res.json().error.code).toBe(code);
  });
});

describe('datasets', () => {
  it('finds a dataset by id and by path', async () => {
    const ds = await h.app.namespaceRepo.createDataset({
      ...mine,
      path: 'find/me.bin',
      sizeBytes: 3,
      sourceUri: 'https://x/y',
    });
    expect((await get(`/api/v1/datasets/${ds.id}`)).json()).toMatchObject({
      id: ds.id,
      path: 'find/me.bin',
      sourceUri: 'https://x/y',
      state: 'importing',
    });
    expect((await get('/api/v1/datasets/by-path?path=find/me.bin')).json().id).toBe(ds.id);
  });

  it.each([
    ['/api/v1/datasets/not-a-uuid', 400, 'VALIDATION_FAILED'],
    ['/api/v1/datasets/00000000-0000-4000-8000-000000000000', 404, 'DATASET_NOT_FOUND'],
    ['/api/v1/datasets/00000000-0000-4000-8000-000000000000/map', 404, 'DATASET_NOT_FOUND'],
    ['/api/v1/datasets/by-path?path=find/nothing', 404, 'DATASET_NOT_FOUND'],
    ['/api/v1/datasets/by-path', 400, 'VALIDATION_FAILED'],
  ])('GET %s → %i %s', async (url, status, code) => {
    const res = await get(url);
    expect(res.statusCode).toBe(status);
    expect(res.json()).toEqual({ error: { code, message: expect.any(String) } });
  });

  it('maps extents, donors (only live ones usable), hashes and a verifiable capability', async () => {
    const a = await h.enroll();
    const b = await h.enroll();
    const ds = await h.app.namespaceRepo.createDataset({
      ...mine,
      path: 'maps/x',
      sizeBytes: 5000,
      morselSize: 65536,
    });
    await setPlacement(h.app.pg, ds.id, [
      { copy: 0, first: 0, count: 5000, unit: 1, phase: 0, donors: [a.agentId, b.agentId] },
    ]);
    const hashes = Buffer.concat(Array.from({ length: 5000 }, (_, i) => digest(i)));
    await putHashes(h.app.pg, ds.id, 0, hashes.subarray(0, 4000 * 32));
    await putHashes(h.app.pg, ds.id, 4000, hashes.subarray(4000 * 32));
    h.app.softState.forget(b.agentId); // b: not seen since start → stale

    for (const auth of [user, a.auth]) {
      const res = await get(`/api/v1/datasets/${ds.id}/map`, auth);
      expect(res.statusCode).toBe(200);
      const map = res.json();
      expect(map.extents).toEqual([
        { copy: 0, first: 0, count: 5000, unit: 1, phase: 0, donors: [a.agentId, b.agentId] },
      ]);
      const byId = Object.fromEntries(map.donors.map((d: { id: string }) => [d.id, d]));
      expect(byId[a.agentId]).toMatchObject({
        state: 'live',
        usable: true,
        url: 'http://127.0.0.1:7401',
      });
      expect(byId[b.agentId]).toMatchObject({ state: 'stale', usable: false });
      expect(map.hashes).toBe(hashes.toString('hex'));
      const payload = verifyCapability(a.managerPublicKey, map.capability, {
        dataset: ds.id,
        op: 'read',
      });
      expect(payload.ops).toEqual(['read']);
      expect(() =>
        verifyCapability(a.managerPublicKey, map.capability, { dataset: ds.id, op: 'write' }),
      ).toThrow(/does not allow/);
      expect(Date.parse(map.capabilityExpiresAt)).toBe(payload.exp * 1000);
    }
    expect((await h.app.namespaceRepo.get(ds.id))?.lastAccessAt).not.toBeNull();
  });

  it('deletes a dataset without donors at once', async () => {
    const ds = await h.app.namespaceRepo.createDataset({ path: 'gone/now', sizeBytes: 1, ...mine });
    const res = await h.call({
      method: 'DELETE',
      url: `/api/v1/datasets/${ds.id}`,
      headers: { authorization: user },
    });
    expect(res.json()).toEqual({ ok: true, deleted: true });
    expect((await get(`/api/v1/datasets/${ds.id}`)).statusCode).toBe(404);
  });

  it('deletes a placed dataset through delete jobs, then gives its space back', async () => {
    const a = await h.enroll({ quotaBytes: 1000 });
    const ds = await h.app.namespaceRepo.createDataset({
      path: 'gone/later',
      sizeBytes: 10,
      ...mine,
    });
    await setPlacement(h.app.pg, ds.id, [
      { copy: 0, first: 0, count: 1, unit: 1, phase: 0, donors: [a.agentId] },
    ]);
    const r = await h.app.reservationsRepo.reserve({
      agentId: a.agentId,
      bytes: 600,
      datasetId: ds.id,
    });
    await h.app.reservationsRepo.commit(r.id);

    const res = await h.call({
      method: 'DELETE',
      url: `/api/v1/datasets/${ds.id}`,
      headers: { authorization: user },
    });
    expect(res.json()).toEqual({ ok: true, deleted: false });
    expect((await get(`/api/v1/datasets/${ds.id}/map`)).statusCode).toBe(404);
    const held = await get('/api/v1/agents/me/datasets', a.auth);
    expect(held.json().datasets).toEqual([
      { id: ds.id, state: 'deleting', morselSize: 1048576, morsels: [0] },
    ]);

    const jobs = (
      await h.call({
        method: 'POST',
        url: '/api/v1/jobs/claim',
        headers: { authorization: a.auth },
        payload: { kinds: ['delete'] },
      })
    ).json();
    expect(jobs).toHaveLength(1);
    expect(jobs[0].payload).toEqual({ datasetId: ds.id });
    await h.call({
      method: 'POST',
      url: `/api/v1/jobs/${jobs[0].id}/finish`,
      headers: { authorization: a.auth },
      payload: { state: 'done' },
    });
    expect((await get(`/api/v1/datasets/${ds.id}`)).statusCode).toBe(404);
    expect((await h.app.agentsRepo.get(a.agentId))?.usedBytes).toBe(0);
  });

  it('gives each donor its space back when its own delete job is done', async () => {
    const donors = [await h.enroll({ quotaBytes: 1000 }), await h.enroll({ quotaBytes: 1000 })];
    const ds = await h.app.namespaceRepo.createDataset({
      path: 'gone/two',
      sizeBytes: 20,
      ...mine,
    });
    await setPlacement(h.app.pg, ds.id, [
      { copy: 0, first: 0, count: 2, unit: 1, phase: 0, donors: donors.map((d) => d.agentId) },
    ]);
    for (const d of donors) {
      const r = await h.app.reservationsRepo.reserve({
        agentId: d.agentId,
        bytes: 300,
        datasetId: ds.id,
      });
      await h.app.reservationsRepo.commit(r.id);
    }
    await h.call({
      method: 'DELETE',
      url: `/api/v1/datasets/${ds.id}`,
      headers: { authorization: user },
    });
    const used = async () =>
      Promise.all(donors.map(async (d) => (await h.app.agentsRepo.get(d.agentId))?.usedBytes));
    expect(await used()).toEqual([300, 300]);

    const finishDelete = async (auth: string) => {
      const [job] = (
        await h.call({
          method: 'POST',
          url: '/api/v1/jobs/claim',
          headers: { authorization: auth },
          payload: { kinds: ['delete'] },
        })
      ).json();
      await h.call({
        method: 'POST',
        url: `/api/v1/jobs/${job.id}/finish`,
        headers: { authorization: auth },
        payload: { state: 'done' },
      });
    };
    await finishDelete(donors[0]!.auth);
    // The first donor freed its morsels; the second still holds its own.
    expect(await used()).toEqual([0, 300]);
    expect((await get(`/api/v1/datasets/${ds.id}`)).json().state).toBe('deleting');
    await finishDelete(donors[1]!.auth);
    expect(await used()).toEqual([0, 0]);
    expect((await get(`/api/v1/datasets/${ds.id}`)).statusCode).toBe(404);
  });
});

describe('placement helpers', () => {
  it.each([
    [[{ copy: 0, first: 0, count: 0, unit: 1, phase: 0, donors: ['x'] }], /count, unit and donors/],
    [
      [
        { copy: 0, first: 0, count: 10, unit: 1, phase: 0, donors: ['x'] },
        { copy: 0, first: 9, count: 2, unit: 1, phase: 0, donors: ['x'] },
      ],
      /overlap/,
    ],
  ])('rejects bad extents %#', async (extents, message) => {
    await expect(
      setPlacement(h.app.pg, '00000000-0000-4000-8000-000000000000', extents),
    ).rejects.toThrow(message);
  });

  it('merges hashes written out of order across the 4096-digest rows', async () => {
    const ds = await h.app.namespaceRepo.createDataset({ path: 'hashes/x', sizeBytes: 1, ...mine });
    const all = Buffer.concat(Array.from({ length: 9000 }, (_, i) => digest(i)));
    await putHashes(h.app.pg, ds.id, 8000, all.subarray(8000 * 32));
    await putHashes(h.app.pg, ds.id, 0, all.subarray(0, 4100 * 32));
    await putHashes(h.app.pg, ds.id, 4100, all.subarray(4100 * 32, 8000 * 32));
    expect((await h.app.placementRepo.getHashes(ds.id)).equals(all)).toBe(true);
    expect(
      (await h.app.placementRepo.getHashes(ds.id, 4095, 2)).equals(
        all.subarray(4095 * 32, 4097 * 32),
      ),
    ).toBe(true);
  });
});
