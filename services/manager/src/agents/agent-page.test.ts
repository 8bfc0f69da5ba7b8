import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AgentPage, AgentView } from '@freeloader/protocol';
import { startHarness, type Harness } from '../test/harness.js';

// Real PostgreSQL and the real route: seven enrolled donors, one of them revoked.
let h: Harness;
let admin: string;
const NAMES = ['lab-03', 'lab-01', 'hall-b', 'lab-02', 'hall-a', 'lab-05', 'lab-04'];

beforeAll(async () => {
  h = await startHarness();
  admin = (await h.login('admin')).authorization;
  const ids = new Map<string, string>();
  for (const name of NAMES) ids.set(name, (await h.enroll({ name })).agentId);
  const revoked = await h.call({
    method: 'DELETE',
    url: `/api/v1/agents/${ids.get('lab-04')}`,
    headers: { authorization: admin },
  });
  expect(revoked.statusCode).toBe(200);
});
afterAll(async () => {
  await h?.close();
});

const list = async (query: string) => {
  const res = await h.call({
    method: 'GET',
    url: `/api/v1/agents${query}`,
    headers: { authorization: admin },
  });
  return res;
};
const page = async (query: string): Promise<AgentPage> => {
  const res = await list(query);
  expect(res.statusCode, res.body).toBe(200);
  return res.json<AgentPage>();
};

describe('GET /agents, paginated and filtered', () => {
  it('walks every donor in name order, a page at a time, with per-state counts', async () => {
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const p: AgentPage = await page(`?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      expect(p.agents.length).toBeLessThanOrEqual(3);
      expect(p.total).toBe(7);
      expect(p.counts).toEqual({ live: 6, revoked: 1 });
      seen.push(...p.agents.map((a) => a.name));
      cursor = p.nextCursor;
      pages++;
    } while (cursor);
    expect(pages).toBe(3);
    expect(seen).toEqual([...NAMES].sort());
  });

  it('searches by name and filters by state', async () => {
    const labs = await page('?q=LAB&limit=10');
    expect(labs.agents.map((a) => a.name)).toEqual([
      'lab-01',
      'lab-02',
      'lab-03',
      'lab-04',
      'lab-05',
    ]);
    expect(labs.counts).toEqual({ live: 4, revoked: 1 });
    const revoked = await page('?state=revoked');
    expect(revoked.agents.map((a) => [a.name, a.state])).toEqual([['lab-04', 'revoked']]);
    expect(revoked.nextCursor).toBeNull();
    const liveLabs = await page('?q=lab&state=live&limit=2');
    expect(liveLabs.agents.map((a) => a.name)).toEqual(['lab-01', 'lab-02']);
    expect(liveLabs.total).toBe(4);
    const none = await page('?q=nowhere');
    expect(none).toEqual({ agents: [], nextCursor: null, total: 0, counts: {} });
  });

  it('keeps the whole array without parameters, and refuses bad cursors and limits', async () => {
    const all = await list('');
    expect(all.json<AgentView[]>()).toHaveLength(7);
    expect((await list('?cursor=bm90LWEtY3Vyc29y')).statusCode).toBe(400);
    expect((await list('?limit=0')).statusCode).toBe(400);
    expect((await list('?limit=100000')).statusCode).toBe(400);
    expect((await list('?state=sleepy')).statusCode).toBe(400);
  });
});
