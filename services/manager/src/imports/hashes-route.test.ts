import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  MiB,
  type ImportHashesResponse,
  type ImportJobPayload,
  type JobView,
} from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startHarness, type Harness } from '../test/harness.js';
import { hexDigests } from './hashes-route.js';

// Real PostgreSQL and a real HTTP source; two enrolled donors that claim and report by hand.
let h: Harness;
let src: TestServer;

beforeAll(async () => {
  h = await startHarness();
  src = await startTestServer({ size: 4 * MiB });
});
afterAll(async () => {
  await h?.close();
  await src?.close();
});

describe('hexDigests', () => {
  it('gives hex for reported digests and "" for zero or missing ones', () => {
    const digests = Buffer.concat([Buffer.alloc(32, 0xab), Buffer.alloc(32)]);
    expect(hexDigests(digests, 3)).toEqual(['ab'.repeat(32), '', '']);
  });
});

describe('GET /jobs/:id/hashes (an n=2 import fanning out)', () => {
  it('answers the job’s own agent with what copy 0 reported; nobody else', async () => {
    const a = await h.enroll({ name: 'a', quotaBytes: 64 * MiB });
    const b = await h.enroll({ name: 'b', quotaBytes: 64 * MiB });
    const user = await h.login('scientist');
    const res = await h.call({
      method: 'POST',
      url: '/api/v1/datasets',
      headers: user,
      payload: { uri: src.url, name: 'fan/hashes.bin', replicas: 2, morselSize: MiB },
    });
    expect(res.statusCode, res.body).toBe(201);
    const claim = async (auth: string) =>
      (
        await h.call({
          method: 'POST',
          url: '/api/v1/jobs/claim',
          headers: { authorization: auth },
          payload: { kinds: ['import'] },
        })
      ).json<JobView[]>()[0]!;
    const jobA = await claim(a.auth);
    const jobB = await claim(b.auth);
    // Both jobs carry the fan-out: copy 0's extents, endpoints and a read capability.
    const fan = (jobA.payload as ImportJobPayload).fanOut!;
    expect(fan.primaries.every((e) => e.copy === 0)).toBe(true);
    expect(fan.donors.map((d) => d.id).sort()).toEqual([a.agentId, b.agentId].sort());
    expect(fan.readCapability).not.toBe('');

    const hashesOf = (auth: string | undefined, jobId: string) =>
      h.call({
        method: 'GET',
        url: `/api/v1/jobs/${jobId}/hashes?first=0&count=4`,
        headers: auth ? { authorization: auth } : {},
      });
    const before = await hashesOf(b.auth, jobB.id);
    expect(before.statusCode, before.body).toBe(200);
    expect(before.json<ImportHashesResponse>()).toEqual({ first: 0, hashes: ['', '', '', ''] });

    const sha256 = 'cd'.repeat(32);
    const progress = await h.call({
      method: 'POST',
      url: `/api/v1/jobs/${jobA.id}/progress`,
      headers: { authorization: a.auth },
      payload: { doneBytes: MiB, hashes: [{ index: 2, sha256 }] },
    });
    expect(progress.statusCode, progress.body).toBe(200);
    const after = await hashesOf(b.auth, jobB.id);
    expect(after.json<ImportHashesResponse>().hashes).toEqual(['', '', sha256, '']);

    expect((await hashesOf(a.auth, jobB.id)).statusCode).toBe(404);
    expect((await hashesOf(undefined, jobB.id)).statusCode).toBe(401);
    const tooMany = await h.call({
      method: 'GET',
      url: `/api/v1/jobs/${jobB.id}/hashes?first=0&count=100000`,
      headers: { authorization: b.auth },
    });
    expect(tooMany.statusCode).toBe(400);

    const finished = await h.call({
      method: 'POST',
      url: `/api/v1/jobs/${jobA.id}/finish`,
      headers: { authorization: a.auth },
      payload: { state: 'failed', error: 'test' },
    });
    expect(finished.statusCode, finished.body).toBe(200);
    // The import failed with it: B's job is cancelled and learns so while it waits.
    expect((await hashesOf(b.auth, jobB.id)).statusCode).toBe(409);
  });
});
