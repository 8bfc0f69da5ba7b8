import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DatasetView } from '@freeloader/protocol';
import { recordCut } from '../repositories/evictions.js';
import { insertSamples } from '../repositories/history.js';
import { enqueueJob } from '../repositories/jobs.js';
import { insertPatchSession } from '../repositories/prefix-patch-sessions.js';
import { syncWaitingUnits } from '../repositories/repair-units.js';
import { apiCall } from '../test/api-call.js';
import { startHarness, type Harness } from '../test/harness.js';

/**
 * Issue 17: routes that list things about datasets (cache, evictions, patch sessions,
 * transfers, failures, repair units, dataset history, the event stream) show each user only
 * the datasets they may read. Two datasets: `shared` (owner's, shared with the lab group, so
 * the lab member reads it) and `private` (other's, shared with nobody). Over real HTTP and
 * PostgreSQL, each route × owner / group member / other user / admin.
 */
let h: Harness;
let port: number;
let agentId: string;
const auth: Record<string, string> = {};
const ids: Record<string, string> = {};
let shared: DatasetView;
let priv: DatasetView;

type Who = 'owner' | 'member' | 'other' | 'admin';

async function call(who: Who, method: string, path: string, body?: unknown): Promise<unknown> {
  const { status, json } = await apiCall(
    `http://127.0.0.1:${port}`,
    auth[who]!,
    method,
    path,
    body,
  );
  expect(status, `${method} ${path} as ${who}: ${JSON.stringify(json)}`).toBeLessThan(300);
  return json;
}

type Row = { datasetId: string | null };

/** Each route, and the dataset ids its answer shows. */
const ROUTES: Record<string, (who: Who) => Promise<(string | null)[]>> = {
  '/cache': async (who) =>
    ((await call(who, 'GET', '/cache')) as { datasets: { id: string }[] }).datasets.map(
      (d) => d.id,
    ),
  '/cache/evictions': async (who) =>
    ((await call(who, 'GET', '/cache/evictions')) as Row[]).map((r) => r.datasetId),
  '/patch-sessions': async (who) =>
    ((await call(who, 'GET', '/patch-sessions')) as Row[]).map((r) => r.datasetId),
  '/transfers': async (who) =>
    ((await call(who, 'GET', '/transfers')) as Row[]).map((r) => r.datasetId),
  '/transfers/failures': async (who) =>
    ((await call(who, 'GET', '/transfers/failures')) as Row[]).map((r) => r.datasetId),
  '/repairs': async (who) =>
    ((await call(who, 'GET', '/repairs')) as { units: Row[] }).units.map((u) => u.datasetId),
  '/history?series=dataset_rate': async (who) =>
    (
      (await call(who, 'GET', '/history?series=dataset_rate')) as {
        subjects: { subject: string | null }[];
      }
    ).subjects.map((s) => s.subject),
  '/events': (who) => eventsSeenBy(who),
};

/** What each caller may see: the owner and the lab member `shared`, other `private`. */
const SEES: Record<Who, ('shared' | 'private')[]> = {
  owner: ['shared'],
  member: ['shared'],
  other: ['private'],
  admin: ['shared', 'private'],
};

function openStream(authorization: string): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    request(
      { host: '127.0.0.1', port, path: '/api/v1/events', headers: { authorization }, agent: false },
      resolve,
    )
      .on('error', reject)
      .end();
  });
}

/** An open event stream of `who`: publish dataset events, see which of them it carries. */
async function streamOf(who: Who) {
  const res = await openStream(auth[who]!);
  expect(res.statusCode).toBe(200);
  let text = '';
  let fences = 0;
  const until = (p: (t: string) => boolean) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (!p(text)) return;
        res.off('data', onData);
        resolve();
      };
      const onData = (chunk: Buffer) => {
        text += chunk.toString('utf8');
        check();
      };
      res.on('data', onData);
      check();
    });
  await until((t) => t.includes(': connected'));
  return {
    /**
     * Publish a dataset event for each of `datasets`, then an agent event as a fence (every
     * stream carries agent events, in publish order); the dataset ids carried up to the fence.
     */
    async carries(datasets: readonly DatasetView[]): Promise<string[]> {
      text = '';
      const fence = `fence-${who}-${++fences}`;
      for (const ds of datasets) {
        h.app.events.publish({ type: 'dataset', datasetId: ds.id, state: 'ready' }, 'local');
      }
      h.app.events.publish({ type: 'agent', agentId, state: fence }, 'local');
      await until((t) => t.includes(fence));
      return text
        .split('\n')
        .filter((l) => l.startsWith('data: '))
        .map((l) => JSON.parse(l.slice('data: '.length)) as { type: string; datasetId?: string })
        .filter((e) => e.type === 'dataset')
        .map((e) => e.datasetId!);
    },
    close: () => res.destroy(),
  };
}

/** Dataset ids of the events `who`'s stream carries, of one event per dataset. */
async function eventsSeenBy(who: Who): Promise<string[]> {
  const stream = await streamOf(who);
  try {
    return await stream.carries([shared, priv]);
  } finally {
    stream.close();
  }
}

/** Give `ds` one row in every listing above. */
async function touchEverything(ds: DatasetView): Promise<void> {
  await recordCut(h.app.pg, { datasetId: ds.id, kind: 'trim', bytes: 1 }, { reason: 'admin' });
  await insertPatchSession(h.app.pg, {
    datasetId: ds.id,
    client: 'reader',
    first: 0,
    end: 1,
    requestSize: 1,
    nodes: [],
    source: null,
  });
  await enqueueJob(h.app.pg, { kind: 'import', datasetId: ds.id, agentId: null });
  const failing = await enqueueJob(h.app.pg, { kind: 'import', datasetId: ds.id, agentId });
  const claimed = await h.app.jobsRepo.claim(agentId, { max: 10 });
  expect(claimed.map((j) => j.id)).toContain(failing.id);
  await h.app.jobsRepo.finish(failing.id, agentId, { state: 'failed', error: `no ${ds.path}` });
  await insertSamples(h.app.pg, [{ series: 'dataset_rate', subject: ds.id, value: 1 }]);
}

beforeAll(async () => {
  h = await startHarness();
  await h.app.listen({ port: 0, host: '127.0.0.1' });
  port = (h.app.server.address() as AddressInfo).port;
  for (const who of ['owner', 'member', 'other', 'admin'] as const) {
    const u = await h.login(who === 'admin' ? 'admin' : 'scientist');
    auth[who] = u.authorization;
    ids[who] = u.userId;
  }
  agentId = (await h.enroll()).agentId;
  await call('owner', 'POST', '/groups', { name: 'lab' });
  const member = (await h.app.usersRepo.list()).find((u) => u.id === ids.member)!;
  await call('owner', 'PUT', `/groups/lab/members/${member.username}`, {});
  const make = (name: string, owner: string) =>
    h.app.namespaceRepo.createDataset({
      path: `leaks/${name}.bin`,
      sizeBytes: 10,
      sourceUri: `https://example.org/${name}.bin`,
      state: 'ready',
      ownerId: ids[owner]!,
    });
  shared = await make('shared', 'owner');
  priv = await make('private', 'other');
  await call('owner', 'PUT', '/shares', { path: shared.path, group: 'lab' });
  for (const ds of [shared, priv]) await touchEverything(ds);
  await syncWaitingUnits(
    h.app.pg,
    [shared, priv].map((ds) => ({
      datasetId: ds.id,
      copy: 0,
      first: 0,
      count: 1,
      from: agentId,
      reason: 'lost' as const,
      morsels: [0],
      bytes: 10,
      liveCopies: 0,
    })),
  );
});
afterAll(async () => {
  await h?.close();
});

describe('listings show only readable datasets', () => {
  const cells = Object.keys(ROUTES).flatMap((route) =>
    (Object.keys(SEES) as Who[]).map((who) => [route, who] as const),
  );
  it.each(cells)('%s as %s', async (route, who) => {
    const seen = new Set(await ROUTES[route]!(who));
    const byName = { shared: shared.id, private: priv.id };
    for (const name of ['shared', 'private'] as const) {
      expect(seen.has(byName[name]), `${who} sees ${name} in ${route}`).toBe(
        SEES[who].includes(name),
      );
    }
    // Rows about no dataset (deleted ones) are for admins only.
    if (who !== 'admin') expect(seen.has(null)).toBe(false);
  });
});

describe("others' newer rows do not crowd a user's out of a limited page", () => {
  // `private` was touched after `shared`: its rows are the newest on every listing.
  it.each(['/transfers/failures?limit=1', '/transfers?limit=1', '/cache/evictions?limit=1'])(
    '%s as owner',
    async (path) => {
      const rows = (await call('owner', 'GET', path)) as Row[];
      expect(rows.map((r) => r.datasetId)).toEqual([shared.id]);
    },
  );
});

describe('an open event stream', () => {
  // Last in the file: `other` joins the lab group here.
  it('carries a dataset its user may read once they join a group it is shared with', async () => {
    const later = await h.app.namespaceRepo.createDataset({
      path: 'leaks/later.bin',
      sizeBytes: 10,
      sourceUri: 'https://example.org/later.bin',
      state: 'ready',
      ownerId: ids.owner!,
    });
    await call('owner', 'PUT', '/shares', { path: later.path, group: 'lab' });
    const stream = await streamOf('other');
    try {
      expect(await stream.carries([later])).toEqual([]);
      const other = (await h.app.usersRepo.list()).find((u) => u.id === ids.other)!;
      await call('owner', 'PUT', `/groups/lab/members/${other.username}`, {});
      // The stream rechecks a dataset every EVENT_READ_CHECK_TTL_MS, memberships included:
      // publish until it passes (the test's timeout bounds it).
      let seen: string[] = [];
      while (seen.length === 0) {
        seen = await stream.carries([later]);
        if (seen.length === 0) await new Promise((r) => setTimeout(r, 200));
      }
      expect(seen).toEqual([later.id]);
    } finally {
      stream.close();
    }
  });
});
