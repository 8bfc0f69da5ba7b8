import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BATCH_FRAME_HEADER,
  generateSigningKeys,
  MAX_BATCH_MORSELS,
  MAX_MORSELS_PER_DATASET,
  maxMorselBody,
  MIN_MORSEL_SIZE,
  signCapability,
  type CapabilityOp,
  type CapabilityPayload,
  type ErrorBody,
} from '@freeloader/protocol';
import { FsStore } from '../store/fs-store.js';
import { MemoryStore } from '../store/memory-store.js';
import {
  buildMorselService,
  KEEP_ALIVE_TIMEOUT_MS,
  listenMorselService,
} from './morsel-service.js';
import { testPace, type TestGovernorState } from './test-pace.js';

const MS = MIN_MORSEL_SIZE;
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const keys = generateSigningKeys();
const otherKeys = generateSigningKeys();
const agentId = randomUUID();
const ALL: CapabilityOp[] = ['read', 'write', 'delete'];

function cap(
  ds: string,
  ops: CapabilityOp[] = ALL,
  over: Partial<CapabilityPayload> = {},
  key = keys.privateKeyPem,
): string {
  return signCapability(key, {
    ds,
    ops,
    sub: 'test',
    aud: [agentId],
    exp: Math.floor(Date.now() / 1000) + 600,
    ...over,
  });
}

describe('morsel service over HTTP', () => {
  let dir: string;
  let store: FsStore;
  let app: FastifyInstance;
  let base: string;
  let served = 0;
  /** What the serving governor does to GET bodies: pass them, refuse (paused), or pace (stream). */
  let governor: TestGovernorState = 'idle';
  const ds = randomUUID();
  const auth = (token: string) => ({ authorization: `Bearer ${token}` });
  const url = (path: string) => `${base}${path}`;
  const put = (
    id: string,
    index: number | string,
    body: Uint8Array,
    headers: Record<string, string> = {},
  ) =>
    fetch(url(`/v1/morsels/${id}/${index}`), {
      method: 'PUT',
      body,
      headers: { 'content-type': 'application/octet-stream', ...auth(cap(id)), ...headers },
    });

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fl-svc-'));
    store = await FsStore.open(dir);
    await store.create(ds, { morselSize: MS });
    app = buildMorselService({
      store,
      agentId: () => agentId,
      managerPublicKey: () => keys.publicKeyPem,
      onServed: (n) => (served += n),
      pace: testPace(() => governor),
      prepareDataset: async (id) => {
        if (!id.endsWith('0000')) return false;
        await store.create(id, { morselSize: MS });
        return true;
      },
    });
    base = await listenMorselService(app, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('listens with the long keep-alive and answers health without auth', async () => {
    expect(app.server.keepAliveTimeout).toBe(KEEP_ALIVE_TIMEOUT_MS);
    const res = await fetch(url('/v1/health'));
    expect(await res.json()).toEqual({
      ok: true,
      agentId,
      usedBytes: store.usage().usedBytes,
      quotaBytes: store.usage().quotaBytes,
    });
  });

  it('serves through the governor: paused refuses, capped streams the same bytes', async () => {
    const data = randomBytes(1000);
    expect((await put(ds, 5, data)).status).toBe(204);
    const get = () => fetch(url(`/v1/morsels/${ds}/5`), { headers: auth(cap(ds)) });
    try {
      governor = 'paused';
      expect(await failure(await get())).toEqual([503, 'UNAVAILABLE']);
      governor = 'capped';
      const res = await get();
      expect(res.status).toBe(200);
      expect(res.headers.get('x-morsel-sha256')).toBe(sha(data));
      expect(Buffer.from(await res.arrayBuffer())).toEqual(data);
      // A capability in the query (no Authorization header) takes Fastify's route, same answer.
      governor = 'idle';
      const viaQuery = await fetch(url(`/v1/morsels/${ds}/5?cap=${cap(ds, ['read'])}`));
      expect(Buffer.from(await viaQuery.arrayBuffer())).toEqual(data);
    } finally {
      governor = 'idle';
    }
  });

  it('puts, gets and deletes a morsel with a valid capability', async () => {
    const data = randomBytes(1000);
    const putRes = await put(ds, 0, data, { 'x-morsel-sha256': sha(data) });
    expect(putRes.status).toBe(204);
    expect(putRes.headers.get('x-morsel-sha256')).toBe(sha(data));
    const before = served;
    const res = await fetch(url(`/v1/morsels/${ds}/0?cap=${cap(ds, ['read'])}`));
    expect(res.status).toBe(200);
    expect(res.headers.get('content-length')).toBe('1000');
    expect(res.headers.get('x-morsel-sha256')).toBe(sha(data));
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('content-type')).toBe('application/octet-stream');
    expect(Buffer.from(await res.arrayBuffer())).toEqual(data);
    expect(served - before).toBe(1000);
    // HEAD: the same head, no body, and nothing counted as served.
    const head = await fetch(url(`/v1/morsels/${ds}/0`), {
      method: 'HEAD',
      headers: auth(cap(ds)),
    });
    expect(head.status).toBe(200);
    expect(head.headers.get('content-length')).toBe('1000');
    expect(head.headers.get('x-morsel-sha256')).toBe(sha(data));
    expect((await head.arrayBuffer()).byteLength).toBe(0);
    expect(served - before).toBe(1000);
    const del = await fetch(url(`/v1/morsels/${ds}/0`), {
      method: 'DELETE',
      headers: auth(cap(ds, ['delete'])),
    });
    expect(del.status).toBe(204);
    const gone = await fetch(url(`/v1/morsels/${ds}/0`), { headers: auth(cap(ds)) });
    expect(await failure(gone)).toEqual([404, 'MORSEL_NOT_FOUND']);
  });

  const now = Math.floor(Date.now() / 1000);
  it.each([
    ['no capability', undefined, 401, 'CAPABILITY_MISSING'],
    ['a capability for another dataset', () => cap(randomUUID()), 403, 'CAPABILITY_INVALID'],
    ['an expired capability', () => cap(ds, ALL, { exp: now - 3600 }), 403, 'CAPABILITY_EXPIRED'],
    [
      'a capability signed by another key',
      () => cap(ds, ALL, {}, otherKeys.privateKeyPem),
      403,
      'CAPABILITY_INVALID',
    ],
    ['a capability without read', () => cap(ds, ['write', 'delete']), 403, 'CAPABILITY_INVALID'],
    [
      'a capability for another agent',
      () => cap(ds, ALL, { aud: [randomUUID()] }),
      403,
      'CAPABILITY_INVALID',
    ],
    ['a malformed capability', () => 'fl1.garbage', 403, 'CAPABILITY_INVALID'],
  ])('refuses a read with %s', async (_label, token, status, code) => {
    await store.put(ds, 1, randomBytes(10));
    const headers = token ? auth(token()) : undefined;
    const res = await fetch(url(`/v1/morsels/${ds}/1`), headers ? { headers } : {});
    expect(await failure(res)).toEqual([status, code]);
  });

  it.each([
    ['a write with a read-only capability', 'PUT', () => cap(ds, ['read'])],
    ['a delete with a write capability', 'DELETE', () => cap(ds, ['write'])],
  ])('refuses %s', async (_label, method, token) => {
    const res = await fetch(url(`/v1/morsels/${ds}/2`), {
      method,
      headers: { ...auth(token()), 'content-type': 'application/octet-stream' },
      ...(method === 'PUT' ? { body: randomBytes(10) } : {}),
    });
    expect(await failure(res)).toEqual([403, 'CAPABILITY_INVALID']);
  });

  it.each([
    ['a path in the dataset id', `${encodeURIComponent('../../etc/passwd')}/0`],
    ['a non-UUID dataset id', 'not-a-uuid/0'],
    ['an uppercase dataset id', `${randomUUID().toUpperCase()}/0`],
    ['a negative index', `${ds}/-1`],
    ['a fractional index', `${ds}/1.5`],
    ['a non-numeric index', `${ds}/abc`],
    ['an index past the limit', `${ds}/${MAX_MORSELS_PER_DATASET}`],
    ['a batch larger than allowed', `${ds}?from=0&count=${MAX_BATCH_MORSELS + 1}`],
    ['a batch without from', `${ds}?count=1`],
  ])('answers 400 to %s before touching the store', async (_label, path) => {
    const res = await fetch(url(`/v1/morsels/${path}`), { headers: auth(cap(ds)) });
    expect(await failure(res)).toEqual([400, 'VALIDATION_FAILED']);
  });

  it.each([
    ['GET morsel', 'GET', `/v1/morsels/{id}/0`],
    ['PUT morsel', 'PUT', `/v1/morsels/{id}/0`],
    ['batch', 'GET', `/v1/morsels/{id}?from=0&count=4`],
    ['DELETE dataset', 'DELETE', `/v1/morsels/{id}`],
  ])('answers 404 DATASET_NOT_FOUND to %s of an unknown dataset', async (_label, method, path) => {
    const id = randomUUID();
    const res = await fetch(url(path.replace('{id}', id)), {
      method,
      headers: { ...auth(cap(id)), 'content-type': 'application/octet-stream' },
      ...(method === 'PUT' ? { body: randomBytes(10) } : {}),
    });
    expect(await failure(res)).toEqual([404, 'DATASET_NOT_FOUND']);
  });

  it('lets prepareDataset declare a dataset on its first PUT', async () => {
    const id = `${randomUUID().slice(0, -4)}0000`;
    expect((await put(id, 0, randomBytes(10))).status).toBe(204);
    expect((await store.stat(id)).indices).toEqual([0]);
  });

  it('rejects a hash mismatch with 422 and stores nothing', async () => {
    const res = await put(ds, 9, randomBytes(100), { 'x-morsel-sha256': sha(randomBytes(100)) });
    expect(await failure(res)).toEqual([422, 'HASH_MISMATCH']);
    const get = await fetch(url(`/v1/morsels/${ds}/9`), { headers: auth(cap(ds)) });
    expect(get.status).toBe(404);
  });

  it.each([
    ['larger than any morsel', maxMorselBody() + 1, 413, 'PAYLOAD_TOO_LARGE'],
    ["larger than the dataset's morsel size", MS + 1, 400, 'VALIDATION_FAILED'],
    ['empty', 0, 400, 'VALIDATION_FAILED'],
  ])('refuses a body %s', async (_label, size, status, code) => {
    const res = await put(ds, 10, Buffer.alloc(size));
    expect(await failure(res)).toEqual([status, code]);
    await expect(store.get(ds, 10)).rejects.toMatchObject({ code: 'MORSEL_NOT_FOUND' });
  });

  it('streams a batch frame by frame, skipping morsels it does not hold', async () => {
    const id = randomUUID();
    await store.create(id, { morselSize: MS });
    const data = new Map([0, 1, 2, 4, 5].map((i) => [i, randomBytes(i === 5 ? 123 : MS)]));
    for (const [i, d] of data) expect((await put(id, i, d)).status).toBe(204);
    const before = served;
    const res = await fetch(url(`/v1/morsels/${id}?from=0&count=8`), {
      headers: auth(cap(id, ['read'])),
    });
    expect(res.status).toBe(200);
    const frames = parseFrames(Buffer.from(await res.arrayBuffer()));
    expect(frames.map((f) => f.index)).toEqual([0, 1, 2, 4, 5]);
    for (const f of frames) {
      expect(f.sha256).toBe(sha(f.data));
      expect(f.data).toEqual(data.get(f.index));
    }
    expect(served - before).toBe(4 * MS + 123);
    const empty = await fetch(url(`/v1/morsels/${id}?from=100&count=4`), {
      headers: auth(cap(id)),
    });
    expect([empty.status, (await empty.arrayBuffer()).byteLength]).toEqual([200, 0]);
  });

  it('answers unknown routes with an ErrorBody 404', async () => {
    const res = await fetch(url('/v1/nothing'));
    expect(await failure(res)).toEqual([404, 'NOT_FOUND']);
  });
});

describe('morsel service before enrollment', () => {
  it('answers health but refuses morsel requests with 503', async () => {
    const app = buildMorselService({
      store: new MemoryStore(),
      agentId: () => undefined,
      managerPublicKey: () => undefined,
    });
    const base = await listenMorselService(app, '127.0.0.1', 0);
    try {
      const health = await fetch(`${base}/v1/health`);
      expect(((await health.json()) as { agentId: unknown }).agentId).toBeNull();
      const id = randomUUID();
      const res = await fetch(`${base}/v1/morsels/${id}/0`, {
        headers: { authorization: `Bearer ${cap(id)}` },
      });
      expect(await failure(res)).toEqual([503, 'UNAVAILABLE']);
    } finally {
      await app.close();
    }
  });
});

/** A failed response's status and ErrorBody code. */
async function failure(res: Response): Promise<[number, string]> {
  const body = (await res.json()) as ErrorBody;
  return [res.status, body.error.code];
}

/** Parse a batch body: [u32 index][u32 length][32-byte sha256][bytes], repeated. */
function parseFrames(body: Buffer): { index: number; sha256: string; data: Buffer }[] {
  const frames = [];
  for (let off = 0; off < body.length;) {
    const index = body.readUInt32BE(off);
    const length = body.readUInt32BE(off + 4);
    const sha256 = body.toString('hex', off + 8, off + BATCH_FRAME_HEADER);
    const start = off + BATCH_FRAME_HEADER;
    expect(start + length).toBeLessThanOrEqual(body.length);
    frames.push({ index, sha256, data: body.subarray(start, start + length) });
    off = start + length;
  }
  return frames;
}
