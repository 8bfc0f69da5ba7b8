import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FreeLoaderError, MiB, type SourceProbe } from '@freeloader/protocol';
import { startHarness, type Harness } from '../test/harness.js';
import { planCached } from '../placement/import-policy.js';
import { cacheSpace } from './eviction.js';

let h: Harness;
let admin: string;
let user: string;
/** The scientist the datasets below belong to (they pin and read them). */
let userId: string;
const agents: Array<{ agentId: string; auth: string }> = [];

beforeAll(async () => {
  h = await startHarness();
  admin = (await h.login('admin')).authorization;
  const login = await h.login();
  user = login.authorization;
  userId = login.userId;
  for (let i = 0; i < 3; i++) agents.push(await h.enroll({ quotaBytes: 32 * MiB }));
});
afterAll(async () => {
  await h?.close();
});

const call = (method: 'GET' | 'POST' | 'PUT', url: string, auth: string, payload?: object) =>
  h.call({ method, url: `/api/v1${url}`, headers: { authorization: auth }, payload });

async function dataset(path: string, size: number, cached: number, uri: string) {
  const d = await h.app.namespaceRepo.createDataset({
    path,
    sourceUri: uri,
    sizeBytes: size,
    state: 'ready',
    ownerId: userId,
  });
  await h.app.pg.query('UPDATE datasets SET cached_bytes = $2 WHERE id = $1', [d.id, cached]);
  return d.id;
}

describe('source registry', () => {
  it('records measurements per scheme and host, without credentials, as decaying averages', async () => {
    const uri = 'https://u:secret@Data.Example.org/a/b.nc';
    const first = await call('POST', '/sources/measurements', user, {
      uri,
      latencyS: 2,
      patchRate: 10e6,
      width: 4,
      requestSize: 128 * MiB,
    });
    expect(first.statusCode).toBe(200);
    expect(first.json()).toMatchObject({
      source: 'https://data.example.org',
      startupLatencyS: 2,
      patchRate: 10e6,
      patchWidth: 4,
      requestSize: 128 * MiB,
    });
    await call('POST', '/sources/measurements', user, { uri, latencyS: 4 });
    const list = (await call('GET', '/sources', user)).json<
      Array<{
        source: string;
        startupLatencyS: number;
      }>
    >();
    const s = list.find((x) => x.source === 'https://data.example.org')!;
    expect(s.startupLatencyS).toBeCloseTo(0.3 * 4 + 0.7 * 2);
    expect(JSON.stringify(list)).not.toContain('secret');
  });
});

describe('cache routes', () => {
  it('cuts a dataset by hand (admins only), never a pinned one, and reports it in /cache', async () => {
    const id = await dataset('routes/cut.bin', 8 * MiB, 8 * MiB, 'http://src.test:9/cut.bin');
    expect((await call('PUT', `/datasets/${id}/cached`, user, { cachedBytes: 0 })).statusCode).toBe(
      403,
    );
    expect((await call('PUT', `/datasets/${id}/pin`, user, { pinned: true })).statusCode).toBe(200);
    expect(
      (await call('PUT', `/datasets/${id}/cached`, admin, { cachedBytes: MiB })).json(),
    ).toMatchObject({ kind: 'none', toBytes: 8 * MiB });
    await call('PUT', `/datasets/${id}/pin`, user, { pinned: false });
    expect(
      (await call('PUT', `/datasets/${id}/cached`, admin, { cachedBytes: 3 * MiB + 5 })).json(),
    ).toMatchObject({ kind: 'trim', fromBytes: 8 * MiB, toBytes: 3 * MiB, freedBytes: 5 * MiB });
    const status = (await call('GET', '/cache', user)).json();
    expect(status).toMatchObject({ highWatermark: 0.9, lowWatermark: 0.75 });
    expect(status.evictions).toMatchObject({ trims: 1, trimmedBytes: 5 * MiB });
    expect(status.datasets.find((d: { id: string }) => d.id === id)).toMatchObject({
      cachedBytes: 3 * MiB,
      prefixBytes: 8 * MiB, // an unknown source: all of it
      pinned: false,
    });
  });
});

describe('patch sessions', () => {
  it('plans a suffix over live agents; only member nodes get the plan; reports feed the registry', async () => {
    const uri = 'http://patch.test:8/data.bin';
    const id = await dataset('routes/patch.bin', 10 * MiB, 4 * MiB, uri);
    const res = await call('POST', `/datasets/${id}/patch`, user, {});
    expect(res.statusCode).toBe(200);
    const plan = res.json();
    expect(plan).toMatchObject({ datasetId: id, firstMorsel: 4, endMorsel: 10 });
    expect(plan.nodes.map((n: { id: string }) => n.id).sort()).toEqual(
      agents.map((a) => a.agentId).sort(),
    );
    expect(plan.requestSize).toBe(2 * MiB); // 6 MiB over 3 nodes

    const member = await call('GET', `/patch-sessions/${plan.sessionId}/plan`, agents[0]!.auth);
    expect(member.statusCode).toBe(200);
    expect(member.json()).toMatchObject({
      source: { uri, size: 10 * MiB, acceptsRanges: true },
      hashesFrom: 4,
    });
    const outsider = await h.enroll({ quotaBytes: MiB });
    const refused = await call('GET', `/patch-sessions/${plan.sessionId}/plan`, outsider.auth);
    expect(refused.statusCode).toBe(403);

    for (const a of agents) {
      const r = await call('POST', `/patch-sessions/${plan.sessionId}/report`, a.auth, {
        bytes: 2 * MiB,
        activeSeconds: 1,
        latencyMs: 500,
        requests: 1,
        served: 2,
      });
      expect(r.statusCode).toBe(200);
    }
    const sessions = (await call('GET', '/patch-sessions', user)).json();
    expect(sessions[0]).toMatchObject({ id: plan.sessionId, state: 'done', bytes: 6 * MiB });
    expect(sessions[0].rate).toBeCloseTo(3 * 2 * MiB);
    const stats = (await call('GET', '/sources', user)).json<
      Array<{
        source: string;
        patchRate: number;
        patchWidth: number;
        startupLatencyS: number;
      }>
    >();
    expect(stats.find((s) => s.source === 'http://patch.test:8')).toMatchObject({
      patchRate: 6 * MiB,
      patchWidth: 3,
      startupLatencyS: 0.5,
    });
  });

  it('encrypted: member nodes get the key to tag what they patch; untagged hashes are dropped', async () => {
    const id = await dataset('routes/sealed.bin', 6 * MiB, 2 * MiB, 'http://patch.test:8/s.bin');
    await h.app.dataKeys.create(id);
    const plan = (await call('POST', `/datasets/${id}/patch`, user, {})).json();
    const member = (
      await call('GET', `/patch-sessions/${plan.sessionId}/plan`, agents[0]!.auth)
    ).json();
    expect(member.hashesFrom).toBe(2);
    expect(Buffer.from(member.dataKey, 'base64').equals((await h.app.dataKeys.get(id))!)).toBe(
      true,
    );
    // A plain-text hash (no tag) never becomes the reference of a sealed morsel; a sealed
    // copy's hash with its tag does.
    const [plainHash, sealedHash, tag] = ['aa'.repeat(32), 'bb'.repeat(32), 'cc'.repeat(16)];
    const sent = await call('POST', `/patch-sessions/${plan.sessionId}/hashes`, agents[0]!.auth, {
      hashes: [
        { index: 2, sha256: plainHash },
        { index: 3, sha256: sealedHash, tag },
      ],
    });
    expect(sent.statusCode).toBe(200);
    const hashes = (await h.app.placementRepo.getHashes(id, 2, 2)).toString('hex');
    expect(hashes).toBe('00'.repeat(32) + sealedHash);
    const tags = (await h.app.placementRepo.getTags(id)).toString('hex');
    expect(tags.slice(3 * 32, 4 * 32)).toBe(tag);
    // A dataset in clear: no key in the plan.
    const clear = await dataset('routes/clear.bin', 6 * MiB, 2 * MiB, 'http://patch.test:8/c.bin');
    const clearPlan = (await call('POST', `/datasets/${clear}/patch`, user, {})).json();
    const clearMember = (
      await call('GET', `/patch-sessions/${clearPlan.sessionId}/plan`, agents[0]!.auth)
    ).json();
    expect(clearMember.dataKey).toBeUndefined();
  });
});

describe('planCached (the import policy)', () => {
  const probe = (uri: string, size: number, acceptsRanges = true): SourceProbe => ({
    uri,
    size,
    etag: '"e"',
    lastModified: null,
    acceptsRanges,
  });
  /** Placement that fits when the cache has room for `bytes` (the ledger, as the manager sees it). */
  const place = async (bytes: number) => {
    const { capacityBytes, usedBytes } = await cacheSpace(h.app);
    if (bytes > capacityBytes - usedBytes) throw new FreeLoaderError('NO_SPACE', 'full');
    return bytes;
  };

  it.each([
    ['caches a dataset that fits whole', 8 * MiB, true, 8 * MiB],
    ['caches only the model prefix when it does not fit', 150 * MiB, true, 75 * MiB],
    ['needs all of a dataset whose source has no ranges', 150 * MiB, false, 'NO_SPACE'],
  ])('%s', async (_name, size, ranges, expected) => {
    // R_patch half of the default R_client, no latency: the model prefix is half the dataset.
    const uri = `http://policy.test:7/${size}-${ranges}.bin`;
    await h.app.prefixCache.sources.observe('http://policy.test:7', {
      patchRate: 50e6,
      latencyS: 0,
    });
    await h.app.pg.query(`UPDATE source_stats SET startup_latency_s = 0, patch_rate = 50e6
                          WHERE source = 'http://policy.test:7'`);
    await h.app.pg.query('UPDATE agents SET used_bytes = 0');
    const got = await planCached(h.app, probe(uri, size, ranges), 'nobody', MiB, place).then(
      (r) => r.cacheBytes,
      (e: FreeLoaderError) => e.code,
    );
    expect(got).toBe(expected);
  });
});
