import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditPage, DatasetView } from '@freeloader/protocol';
import { apiCall } from '../test/api-call.js';
import { startHarness, type Harness } from '../test/harness.js';
import { labCallers, type LabCallers, type Who } from '../test/lab-callers.js';

/**
 * Issue 17 leftovers: a caller who may not read a dataset or folder gets exactly the answer of
 * a path that does not exist (status, code, message shape), so names cannot be probed; a
 * reader who may not change it still gets 403. Over real HTTP and PostgreSQL, each route that
 * takes a dataset id or namespace path × other user (hidden vs missing: byte-identical once the
 * echoed id or path is masked), group member (reads, may not change), owner and admin.
 */
let h: Harness;
let base: string;
let auth: LabCallers['auth'];
let ids: LabCallers['ids'];
let donor: string;

const call = (who: Who, method: string, path: string, body?: unknown) =>
  apiCall<{ error?: { code: string; message: string } }>(base, auth[who], method, path, body);

/** What names the target in a request, real or missing: its id, path and folder. */
interface Target {
  id: string;
  path: string;
  folder: string;
}

let seq = 0;
/** A ready dataset `TOP/rN/d.bin` (folders too) owned by `owner`, shared with `lab` to read. */
async function fresh(top = 'hidden'): Promise<Target> {
  const folder = `${top}/r${++seq}`;
  const ds: DatasetView = await h.app.namespaceRepo.createDataset({
    path: `${folder}/d.bin`,
    sizeBytes: 10,
    sourceUri: 'https://example.org/d.bin',
    state: 'ready',
    ownerId: ids.owner,
  });
  const shared = await call('owner', 'PUT', '/shares', { path: folder, group: 'lab' });
  expect(shared.status, JSON.stringify(shared.json)).toBe(200);
  return { id: ds.id, path: ds.path, folder };
}

/** A target that does not exist, in a folder that does not exist either. */
const missing = (): Target => ({
  id: randomUUID(),
  path: `hidden/nope${++seq}/d.bin`,
  folder: `hidden/nope${seq}`,
});

/** Each route: the request for a target, and whether it changes the item (member: 403). */
const ROUTES: Record<string, { req: (t: Target) => [string, string, unknown?]; manage: boolean }> =
  {
    'GET /datasets/:id': { req: (t) => ['GET', `/datasets/${t.id}`], manage: false },
    'HEAD /datasets/:id': { req: (t) => ['HEAD', `/datasets/${t.id}`], manage: false },
    'GET /datasets/:id/map': { req: (t) => ['GET', `/datasets/${t.id}/map`], manage: false },
    'GET /datasets/:id/placement': {
      req: (t) => ['GET', `/datasets/${t.id}/placement`],
      manage: false,
    },
    'GET /datasets/:id/throughput': {
      req: (t) => ['GET', `/datasets/${t.id}/throughput`],
      manage: false,
    },
    'POST /datasets/:id/faults': {
      req: (t) => ['POST', `/datasets/${t.id}/faults`, { faults: [{ morsel: 0, donor }] }],
      manage: false,
    },
    'POST /datasets/:id/patch': {
      req: (t) => ['POST', `/datasets/${t.id}/patch`, {}],
      manage: false,
    },
    'GET /datasets/by-path': {
      req: (t) => ['GET', `/datasets/by-path?path=${t.path}`],
      manage: false,
    },
    'GET /access (dataset)': { req: (t) => ['GET', `/access?path=${t.path}`], manage: false },
    'GET /access (folder)': { req: (t) => ['GET', `/access?path=${t.folder}`], manage: false },
    'GET /namespace (folder)': {
      req: (t) => ['GET', `/namespace?path=${t.folder}`],
      manage: false,
    },
    'PUT /datasets/:id/pin': {
      req: (t) => ['PUT', `/datasets/${t.id}/pin`, { pinned: true }],
      manage: true,
    },
    'DELETE /datasets/:id': { req: (t) => ['DELETE', `/datasets/${t.id}`], manage: true },
    'POST /datasets/:id/cancel': { req: (t) => ['POST', `/datasets/${t.id}/cancel`], manage: true },
    'POST /datasets/:id/retry': { req: (t) => ['POST', `/datasets/${t.id}/retry`], manage: true },
    'PUT /shares (dataset)': { req: (t) => ['PUT', '/shares', { path: t.path }], manage: true },
    'PUT /shares (folder)': { req: (t) => ['PUT', '/shares', { path: t.folder }], manage: true },
    'DELETE /shares (dataset)': { req: (t) => ['DELETE', `/shares?path=${t.path}`], manage: true },
  };

/** The answer with the target's id, path and folder masked (the only bytes allowed to differ). */
async function answer(who: Who, route: string, t: Target): Promise<string> {
  const [method, path, body] = ROUTES[route]!.req(t);
  const res = await call(who, method, path, body);
  return `${res.status} ${JSON.stringify(res.json)}`
    .replaceAll(t.path, 'PATH')
    .replaceAll(t.folder, 'FOLDER')
    .replaceAll(t.id, 'ID');
}

beforeAll(async () => {
  h = await startHarness();
  ({ base, auth, ids } = await labCallers(h));
  donor = (await h.enroll()).agentId;
});
afterAll(async () => {
  await h?.close();
});

describe('a path the caller may not read answers as a missing one', () => {
  it.each(Object.keys(ROUTES))('%s', async (route) => {
    const t = await fresh();
    const absent = await answer('other', route, missing());
    expect(absent).toMatch(/^404 /);
    expect(await answer('other', route, t)).toBe(absent);
    // A reader knows it exists: changing it is refused as such, reading it is allowed.
    const member = await answer('member', route, t);
    if (ROUTES[route]!.manage) expect(member).toMatch(/^403 .*"FORBIDDEN"/);
    else expect(member).not.toBe(absent);
    expect(await answer('owner', route, t)).not.toBe(absent);
    // Its own dataset: the owner's delete may have made the first one gone.
    expect(await answer('admin', route, await fresh())).not.toBe(absent);
  });

  it('a folder the caller can see (something below is shared) keeps its 403 for changes', async () => {
    // Not under `hidden`: the routes above share some of it with the whole site.
    const t = await fresh('seen');
    const parent = t.folder.split('/')[0]!;
    const res = await call('member', 'PUT', '/shares', { path: parent });
    expect(res.status, JSON.stringify(res.json)).toBe(403);
    const other = await call('other', 'PUT', '/shares', { path: parent });
    expect(other.status, JSON.stringify(other.json)).toBe(404);
  });

  it('audits a hidden refusal as refused, so probing still shows up for admins', async () => {
    const t = await fresh();
    expect((await call('other', 'DELETE', `/datasets/${t.id}`)).status).toBe(404);
    // Rows are written once the answer is sent: wait for it.
    await vi.waitFor(
      async () => {
        const page = (await call('admin', 'GET', '/audit?limit=50')).json as unknown as AuditPage;
        expect(page.entries).toContainEqual(
          expect.objectContaining({ action: 'dataset.delete', target: t.id, outcome: 'refused' }),
        );
      },
      { timeout: 20_000, interval: 100 },
    );
  });
});

describe('mkdir -p over a folder the caller may not see', () => {
  it('is a taken name at the root, without the folder’s owner or sharing; a visible one answers its view', async () => {
    const t = await fresh('mkdir');
    const other = await call('other', 'POST', '/folders', { path: t.folder });
    expect(other.status, JSON.stringify(other.json)).toBe(409);
    expect(other.json.error?.code).toBe('ALREADY_EXISTS');
    expect(JSON.stringify(other.json)).not.toContain(ids.owner);
    expect(JSON.stringify(other.json)).not.toContain('lab');
    // The group member may read it: mkdir -p of an existing folder answers it, as before.
    const member = await call('member', 'POST', '/folders', { path: t.folder });
    expect(member.status, JSON.stringify(member.json)).toBe(201);
    // A free name where the caller may create (the root) is created for the caller; the whole
    // table of who learns what when creating is create-names.test.ts.
    const mine = await call('other', 'POST', '/folders', { path: `mine${++seq}/sub` });
    expect(mine.status, JSON.stringify(mine.json)).toBe(201);
  });
});
