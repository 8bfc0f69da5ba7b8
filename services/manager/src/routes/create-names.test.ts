import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { AuditPage } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { apiCall } from '../test/api-call.js';
import { startHarness, type Harness } from '../test/harness.js';
import { labCallers, type LabCallers, type Who } from '../test/lab-callers.js';

/**
 * Names that leak (issue 17 leftovers): creating a folder (POST /folders) or a dataset (POST
 * /datasets) never tells a caller that something it may not see exists, except for names in a
 * folder it may create in (the root, its own folders: names visible by design, as `ls` shows a
 * writable directory's names). Table over caller (owner, group member, other user, admin) ×
 * parent (root, a visible folder, a hidden folder) × name (free, taken by something visible,
 * by a hidden folder, by a hidden dataset) × kind, over real HTTP and PostgreSQL. Each cell gets
 * its own fixture; answers are compared with the fixture's number masked.
 */
let h: Harness;
let src: TestServer;
let base: string;
let auth: LabCallers['auth'];
let ids: LabCallers['ids'];

type Parent = 'root' | 'visible' | 'hidden';
type Name = 'free' | 'visible' | 'hidden folder' | 'hidden dataset';
type Kind = 'folder' | 'dataset';
const call = (who: Who, method: string, path: string, body?: unknown) =>
  apiCall<{ error?: { code: string; message: string } }>(base, auth[who], method, path, body);

let seq = 0;
const DONOR_BYTES = 64 * 1024 * 1024;
let donorAuth: string;
let memberName: string;

/** Keep the donor live (the harness runs no timers: it goes stale between imports). */
async function heartbeat(): Promise<void> {
  const res = await h.call({
    method: 'POST',
    url: '/api/v1/agents/heartbeat',
    headers: { authorization: donorAuth },
    payload: { quotaBytes: DONOR_BYTES, usedBytes: 0, freeBytes: DONOR_BYTES, servingRate: 0 },
  });
  expect(res.statusCode, res.body).toBeLessThan(300);
}

/** A dataset at `path` owned by the owner (folders made too), straight into the repository. */
const dataset = (path: string) =>
  h.app.namespaceRepo.createDataset({
    path,
    sizeBytes: 10,
    sourceUri: 'https://example.org/x.bin',
    state: 'ready',
    ownerId: ids.owner,
  });

async function share(path: string, body: Record<string, unknown> = {}): Promise<void> {
  const res = await call('owner', 'PUT', '/shares', { path, ...body });
  expect(res.status, JSON.stringify(res.json)).toBe(200);
}

/**
 * A fresh fixture `n`, all the owner's: `vis-n` seen by everyone (something below it is shared
 * with the site) but writable by its owner and admins only; `hid-n` shared with nobody; and the
 * name under test, `name-n`, inside `parent` in the state `name`. Returns its path.
 */
async function fixture(n: number, parent: Parent, name: Name): Promise<string> {
  await dataset(`vis-${n}/pub/readme.bin`);
  await share(`vis-${n}/pub`);
  await dataset(`hid-${n}/inner.bin`);
  const dir = { root: '', visible: `vis-${n}/`, hidden: `hid-${n}/` }[parent];
  const at = `${dir}name-${n}`;
  if (name === 'visible') {
    await dataset(`${at}/seen.bin`);
    await share(at);
  } else if (name === 'hidden folder') await dataset(`${at}/x.bin`);
  else if (name === 'hidden dataset') await dataset(at);
  return at;
}

/** Create `path` as `who`; the answer with the fixture's number masked. */
async function create(who: Who, kind: Kind, path: string, n: number): Promise<string> {
  if (kind === 'dataset') await heartbeat();
  const res =
    kind === 'folder'
      ? await call(who, 'POST', '/folders', { path })
      : await call(who, 'POST', '/datasets', { uri: src.url, name: path });
  const body = res.status === 201 ? '' : JSON.stringify(res.json);
  // The fixture's own names only: `-${n}` alone also matches inside user names.
  return `${res.status} ${body}`.replace(new RegExp(`\\b(vis|hid|name)-${n}\\b`, 'g'), '$1-N');
}

/** What the model (auth/create-access.ts, README "Names") says each cell answers. */
function expected(who: Who, parent: Parent, name: Name, kind: Kind): RegExp {
  const sees = who === 'owner' || who === 'admin';
  // A hidden parent is a taken name at the root to those who cannot see it.
  if (!sees && parent === 'hidden') return /^409 .*"ALREADY_EXISTS".*\\"hid-N\\" is taken/;
  // mkdir -p of a folder they see answers it, wherever it is.
  if (kind === 'folder' && name === 'visible') return /^201 $/;
  // A folder they see but may not create in: 403 whatever the name.
  if (!sees && parent === 'visible') return /^403 .*"FORBIDDEN".*may not create in vis-N/;
  if (name === 'free') return /^201 $/;
  if (!sees && name.startsWith('hidden')) return /^409 .*"ALREADY_EXISTS".*\\"name-N\\" is taken/;
  const isFolder = name !== 'hidden dataset';
  if (kind === 'folder') return isFolder ? /^201 $/ : /^409 .*is a dataset, not a folder/;
  return isFolder ? /^409 .*is a folder/ : /^409 .*dataset \\".*name-N\\" already exists/;
}

beforeAll(async () => {
  h = await startHarness();
  src = await startTestServer({ size: 0 });
  ({ base, auth, ids, memberName } = await labCallers(h));
  // A live donor, so that an import the caller may make is placed (201), not refused for room.
  donorAuth = (await h.enroll({ quotaBytes: DONOR_BYTES })).auth;
});
afterAll(async () => {
  await h?.close();
  await src?.close();
});

const WHO: Who[] = ['owner', 'member', 'other', 'admin'];
const PARENTS: Parent[] = ['root', 'visible', 'hidden'];
const KINDS: Kind[] = ['folder', 'dataset'];
const CELLS = WHO.flatMap((who) =>
  PARENTS.flatMap((parent) => KINDS.map((kind) => [who, parent, kind] as const)),
);

describe('creating a name: what a caller learns', () => {
  it.each(CELLS)('%s, %s parent, %s', async (who, parent, kind) => {
    // Nothing in a hidden folder is visible: that cell does not exist.
    const names: Name[] =
      parent === 'hidden'
        ? ['free', 'hidden folder', 'hidden dataset']
        : ['free', 'visible', 'hidden folder', 'hidden dataset'];
    const answers: Partial<Record<Name, string>> = {};
    for (const name of names) {
      const n = ++seq;
      const at = await fixture(n, parent, name);
      answers[name] = await create(who, kind, at, n);
      expect(answers[name], `${name}: ${answers[name]}`).toMatch(expected(who, parent, name, kind));
    }
    const sees = who === 'owner' || who === 'admin';
    // Where the caller may not create, a hidden name answers exactly as a free one.
    if (!sees && parent !== 'root') {
      expect(answers['hidden folder']).toBe(answers.free);
      expect(answers['hidden dataset']).toBe(answers.free);
    }
    // Where it may (names visible by design), a hidden folder and a hidden dataset look alike.
    if (!sees) expect(answers['hidden folder']).toBe(answers['hidden dataset']);
  });

  it('never shows a hidden item’s owner or sharing in a refusal', async () => {
    const n = ++seq;
    const at = await fixture(n, 'root', 'hidden folder');
    await share(at, { group: 'lab' });
    const res = await call('other', 'POST', '/folders', { path: `${at}/sub` });
    expect(res.status, JSON.stringify(res.json)).toBe(409);
    expect(JSON.stringify(res.json)).not.toContain(ids.owner);
    expect(JSON.stringify(res.json)).not.toContain('lab');
    // The group member reads it now: mkdir -p passes through it, but creating needs manage.
    const member = await call('member', 'POST', '/folders', { path: `${at}/sub` });
    expect(member.status, JSON.stringify(member.json)).toBe(403);
    expect((await call('member', 'POST', '/folders', { path: at })).status).toBe(201);
  });

  it('lets the managers of a group it is shared with --manage create inside', async () => {
    const n = ++seq;
    const at = await fixture(n, 'visible', 'free');
    const manager = await call('owner', 'PUT', `/groups/lab/members/${memberName}`, {
      manager: true,
    });
    expect(manager.status).toBe(200);
    await share(`vis-${n}`, { group: 'lab', manage: true });
    expect((await call('member', 'POST', '/folders', { path: `${at}/mine` })).status).toBe(201);
    expect((await call('other', 'POST', '/folders', { path: `${at}/theirs` })).status).toBe(403);
    expect(
      (await call('owner', 'PUT', `/groups/lab/members/${memberName}`, { manager: false })).status,
    ).toBe(200);
  });

  it('audits refused creations (may not create there; a hidden name taken) as refused', async () => {
    const n = ++seq;
    const hidden = await fixture(n, 'root', 'hidden dataset');
    expect((await call('other', 'POST', '/datasets', { uri: src.url, name: hidden })).status).toBe(
      409,
    );
    expect((await call('other', 'POST', '/folders', { path: `vis-${n}/new` })).status).toBe(403);
    // Rows are written once the answer is sent: wait for them.
    await vi.waitFor(
      async () => {
        const page = (await call('admin', 'GET', '/audit?limit=100')).json as unknown as AuditPage;
        expect(page.entries).toContainEqual(
          expect.objectContaining({ action: 'dataset.import', target: hidden, outcome: 'refused' }),
        );
        expect(page.entries).toContainEqual(
          expect.objectContaining({
            action: 'folder.create',
            target: `vis-${n}/new`,
            outcome: 'refused',
          }),
        );
      },
      { timeout: 20_000, interval: 100 },
    );
  });
});
