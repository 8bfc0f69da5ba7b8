import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditPage, DatasetView, Listing } from '@freeloader/protocol';
import { setPlacement } from '../repositories/placement.js';
import { apiCall } from '../test/api-call.js';
import { startHarness, type Harness } from '../test/harness.js';

/**
 * The ownership matrix of issue 17 over real HTTP (the manager listening on an ephemeral port,
 * PostgreSQL behind it): owner, group manager, group member, other user, admin, and agents
 * (one holding the dataset, one not) × read / delete / re-import / pin / share.
 */
let h: Harness;
let base: string;
const auth: Record<string, string> = {};
const ids: Record<string, string> = {};
let holder: string;

const call = (who: string, method: string, path: string, body?: unknown) =>
  apiCall<Answer>(base, auth[who]!, method, path, body);

/** The fields of the manager's answers these tests read. */
interface Answer {
  error: { code: string; message: string };
  members: { username: string; manager: boolean }[];
  sharing: unknown[];
  [field: string]: unknown;
}

let seq = 0;
/** A ready dataset owned by `owner`, shared with `lab` to manage, held by the holder agent. */
async function fresh(): Promise<DatasetView> {
  const ds = await h.app.namespaceRepo.createDataset({
    path: `matrix/d${++seq}.bin`,
    sizeBytes: 10,
    sourceUri: 'https://example.org/d.bin',
    state: 'ready',
    ownerId: ids.owner!,
  });
  await setPlacement(h.app.pg, ds.id, [
    { copy: 0, first: 0, count: 1, unit: 1, phase: 0, donors: [holder] },
  ]);
  const shared = await call('owner', 'PUT', '/shares', {
    path: ds.path,
    group: 'lab',
    manage: true,
  });
  expect(shared.status).toBe(200);
  return ds;
}

beforeAll(async () => {
  h = await startHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = h.app.server.address();
  base = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  for (const who of ['owner', 'lead', 'member', 'other'] as const) {
    const u = await h.login('scientist');
    auth[who] = u.authorization;
    ids[who] = u.userId;
  }
  const admin = await h.login('admin');
  auth.admin = admin.authorization;
  const a = await h.enroll();
  holder = a.agentId;
  auth.agent = a.auth;
  auth.stranger = (await h.enroll()).auth;
  expect((await call('lead', 'POST', '/groups', { name: 'lab' })).status).toBe(201);
  const members = (await h.app.usersRepo.list()).find((u) => u.id === ids.member)!;
  const added = await call('lead', 'PUT', `/groups/lab/members/${members.username}`, {});
  expect(added.status).toBe(200);
  expect(added.json.members).toContainEqual({ username: members.username, manager: false });
});
afterAll(async () => {
  await h?.close();
});

type Act = 'read' | 'delete' | 're-import' | 'pin' | 'share';
/** What each action answers when allowed (re-import of a ready dataset: 409, not failed). */
const ALLOWED: Record<Act, number> = {
  read: 200,
  delete: 200,
  're-import': 409,
  pin: 200,
  share: 200,
};
const act: Record<Act, (who: string, ds: DatasetView) => ReturnType<typeof call>> = {
  read: (who, ds) => call(who, 'GET', `/datasets/${ds.id}/map`),
  delete: (who, ds) => call(who, 'DELETE', `/datasets/${ds.id}`),
  're-import': (who, ds) => call(who, 'POST', `/datasets/${ds.id}/retry`),
  pin: (who, ds) => call(who, 'PUT', `/datasets/${ds.id}/pin`, { pinned: true }),
  share: (who, ds) => call(who, 'PUT', '/shares', { path: ds.path }),
};

const MATRIX: [string, Record<Act, boolean>][] = [
  ['owner', { read: true, delete: true, 're-import': true, pin: true, share: true }],
  ['lead', { read: true, delete: true, 're-import': true, pin: true, share: true }],
  ['member', { read: true, delete: false, 're-import': false, pin: false, share: false }],
  ['other', { read: false, delete: false, 're-import': false, pin: false, share: false }],
  ['admin', { read: true, delete: true, 're-import': true, pin: true, share: true }],
  ['agent', { read: true, delete: false, 're-import': false, pin: false, share: false }],
  ['stranger', { read: false, delete: false, 're-import': false, pin: false, share: false }],
];

describe('ownership matrix', () => {
  const cells = MATRIX.flatMap(([who, row]) =>
    (Object.keys(row) as Act[]).map((a) => [who, a, row[a]] as const),
  );
  it.each(cells)('%s may %s: %s', async (who, action, allowed) => {
    const ds = await fresh();
    const res = await act[action](who, ds);
    if (allowed) {
      expect(res.status, JSON.stringify(res.json)).toBe(ALLOWED[action]);
    } else if (
      MATRIX.find(([w]) => w === who)![1].read ||
      res.json.error.message.startsWith('agents may not call')
    ) {
      // A reader knows it exists: told why it may not (and user-only routes refuse any agent).
      expect(res.status, JSON.stringify(res.json)).toBe(403);
      expect(res.json.error.code).toBe('FORBIDDEN');
      expect(res.json.error.message).toMatch(/may not|only/);
    } else {
      // Anyone else is answered as for a missing path (hidden-paths.test.ts has the detail).
      expect(res.status, JSON.stringify(res.json)).toBe(404);
      expect(res.json.error.code).toMatch(/NOT_FOUND$/);
    }
    // A refused delete leaves the dataset; an allowed one has donors drop it (then it goes).
    const after = await h.app.namespaceRepo.get(ds.id);
    expect(after?.state).toBe(action === 'delete' && allowed ? 'deleting' : 'ready');
  });
});

describe('listing and sharing', () => {
  const paths = async (who: string, url: string) =>
    (await call(who, 'GET', url)).json as unknown as Listing & DatasetView[];

  it('lists only what a user may read; folder shares reach the datasets below', async () => {
    await h.app.namespaceRepo.createDataset({
      path: 'lists/private/p.bin',
      sizeBytes: 1,
      ownerId: ids.owner!,
    });
    const search = async (who: string) =>
      (await paths(who, '/datasets?query=lists/')).map((d) => d.path);
    expect(await search('owner')).toEqual(['lists/private/p.bin']);
    expect(await search('other')).toEqual([]);
    expect(await search('admin')).toEqual(['lists/private/p.bin']);
    // A folder with nothing the caller may read is, to it, not there.
    expect((await call('other', 'GET', '/namespace?path=lists')).status).toBe(404);
    expect((await paths('other', '/namespace')).folders.map((f) => f.path)).not.toContain('lists');
    expect((await call('other', 'GET', '/datasets/by-path?path=lists/private/p.bin')).status).toBe(
      404,
    );

    // Sharing the folder with the site shares what is in it; the listing shows its origin.
    // The import made the folders, so they are the owner's to share too.
    expect((await call('other', 'PUT', '/shares', { path: 'lists/private' })).status).toBe(404);
    expect((await call('owner', 'PUT', '/shares', { path: 'lists/private' })).status).toBe(200);
    expect(await search('other')).toEqual(['lists/private/p.bin']);
    const listed = await paths('other', '/namespace?path=lists/private');
    expect(listed.datasets[0]).toMatchObject({
      path: 'lists/private/p.bin',
      mayManage: false,
      sharing: [{ groupId: null, group: null, manage: false, from: 'lists/private' }],
    });
    expect((await paths('other', '/namespace?path=lists')).folders.map((f) => f.path)).toEqual([
      'lists/private',
    ]);
    const gone = await call('admin', 'DELETE', '/shares?path=lists/private');
    expect(gone.json.sharing).toEqual([]);
    expect(await search('other')).toEqual([]);
  });

  it('shows the transfers of a dataset only to those who may read it', async () => {
    const ds = await fresh();
    await h.app.pg.query("INSERT INTO jobs (kind, dataset_id) VALUES ('import', $1)", [ds.id]);
    const seen = async (who: string) =>
      ((await call(who, 'GET', `/transfers?datasetId=${ds.id}`)).json as unknown as unknown[])
        .length;
    expect(await seen('owner')).toBe(1);
    expect(await seen('member')).toBe(1);
    expect(await seen('other')).toBe(0);
    expect(await seen('admin')).toBe(1);
  });

  it('an inherited share is removed where it is set, with a message saying so', async () => {
    await h.app.namespaceRepo.createDataset({
      path: 'inh/x.bin',
      sizeBytes: 1,
      ownerId: ids.owner!,
    });
    expect((await call('admin', 'PUT', '/shares', { path: 'inh', group: 'lab' })).status).toBe(200);
    const res = await call('owner', 'DELETE', '/shares?path=inh/x.bin&group=lab');
    expect(res.status).toBe(404);
    expect(res.json.error.message).toMatch(/inherited share is removed from the folder/);
  });

  it('the site cannot be given manage rights; unknown groups are named', async () => {
    const ds = await fresh();
    const site = await call('owner', 'PUT', '/shares', { path: ds.path, manage: true });
    expect(site.status).toBe(400);
    const nogroup = await call('owner', 'PUT', '/shares', { path: ds.path, group: 'nope' });
    expect(nogroup.json.error).toEqual({ code: 'NOT_FOUND', message: 'no group "nope"' });
  });

  it('only admins chown; the new owner manages, the old one no longer does', async () => {
    const ds = await h.app.namespaceRepo.createDataset({
      path: 'chown/c.bin',
      sizeBytes: 1,
      ownerId: ids.owner!,
    });
    const otherName = (await h.app.usersRepo.list()).find((u) => u.id === ids.other)!.username;
    const body = { path: ds.path, username: otherName };
    expect((await call('owner', 'PUT', '/owner', body)).status).toBe(403);
    const given = await call('admin', 'PUT', '/owner', body);
    expect(given.json).toMatchObject({ kind: 'dataset', owner: otherName, ownerId: ids.other });
    // The old owner no longer reads it either: to it, it is as if gone.
    expect((await call('owner', 'PUT', `/datasets/${ds.id}/pin`, { pinned: true })).status).toBe(
      404,
    );
    expect((await call('other', 'PUT', `/datasets/${ds.id}/pin`, { pinned: true })).status).toBe(
      200,
    );
  });

  it('only group managers and admins change a group', async () => {
    const otherName = (await h.app.usersRepo.list()).find((u) => u.id === ids.other)!.username;
    const res = await call('member', 'PUT', `/groups/lab/members/${otherName}`, {});
    expect(res.status).toBe(403);
    expect(res.json.error.message).toBe(
      'only a manager of group lab or an admin may change its members',
    );
    expect((await call('admin', 'PUT', `/groups/lab/members/${otherName}`, {})).status).toBe(200);
    expect((await call('lead', 'DELETE', `/groups/lab/members/${otherName}`)).status).toBe(200);
  });

  it('writes audit rows for share, unshare, chown and group changes', async () => {
    // Rows are written once the answer is sent: wait for the last one.
    const page = await vi.waitFor(
      async () => {
        const p = (await call('admin', 'GET', '/audit?limit=200')).json as unknown as AuditPage;
        expect(p.entries.map((e) => e.action)).toContain('group.member_remove');
        return p;
      },
      { timeout: 20_000, interval: 100 },
    );
    const actions = new Set(page.entries.map((e) => e.action));
    for (const a of [
      'share.add',
      'share.remove',
      'owner.change',
      'group.create',
      'group.member_add',
      'group.member_remove',
    ]) {
      expect(actions).toContain(a);
    }
    const refused = page.entries.find(
      (e) => e.action === 'owner.change' && e.outcome === 'refused',
    );
    expect(refused?.target).toBe('chown/c.bin');
  });
});
