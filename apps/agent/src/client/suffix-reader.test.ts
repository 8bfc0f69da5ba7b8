import { createHash, randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { MiB, type DatasetMap, type SuffixPlan } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { suffixCheck } from './suffix-check.js';
import { SuffixReader } from './suffix-reader.js';

const servers: TestServer[] = [];
afterAll(async () => Promise.all(servers.map((s) => s.close())));
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A dataset of `morsels` MiB whose suffix from `first` has no patching node left. */
function setup(srv: TestServer, morsels: number, first: number, requestMorsels = 4) {
  const datasetId = randomUUID();
  const map = {
    dataset: {
      id: datasetId,
      sourceUri: srv.url,
      sizeBytes: morsels * MiB,
      morselSize: MiB,
      etag: srv.etag,
      lastModified: null,
    },
    capability: 'unused',
  } as unknown as DatasetMap;
  const plan: SuffixPlan = {
    sessionId: randomUUID(),
    datasetId,
    firstMorsel: first,
    endMorsel: morsels,
    requestSize: requestMorsels * MiB,
    nodes: [],
    etag: srv.etag,
  };
  return { map, reader: new SuffixReader(map, plan) };
}

describe('SuffixReader', () => {
  it('orders the suffix the way it arrives: offset in request, then request', async () => {
    const srv = await startTestServer({ size: 18 * MiB });
    servers.push(srv);
    const { reader } = setup(srv, 18, 10);
    const all = Array.from({ length: 18 }, (_, i) => i);
    expect(reader.arrivalOrder(all)).toEqual([
      ...all.slice(0, 10),
      ...[10, 14, 11, 15, 12, 16, 13, 17],
    ]);
    expect(reader.covers(9)).toBe(false);
    expect(reader.covers(10)).toBe(true);
    await reader.close();
  });

  it('with no patching node, reads the suffix from the source, verified', async () => {
    const srv = await startTestServer({ size: 6 * MiB, seed: 9 });
    servers.push(srv);
    const { reader } = setup(srv, 6, 2);
    const target = Buffer.alloc(MiB);
    const expected = srv.content.subarray(3 * MiB, 4 * MiB);
    const hash = async () => sha(target);
    // Known hash: checked against it. Unknown (zeros): the pinned source read stands.
    const checkOf = (expected: string) =>
      suffixCheck({ index: 3, expected, hash, plain: () => target, sealing: undefined });
    for (const known of [sha(expected), '0'.repeat(64)]) {
      const got = await reader.readVerified(3, MiB, target, checkOf(known));
      expect(sha(got)).toBe(sha(expected));
    }
    // Source bytes that do not match the manager's hash fail loudly.
    await expect(
      reader.readVerified(3, MiB, target, checkOf('ab'.repeat(32))),
    ).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
    // The source changed since: its If-Match read fails loudly.
    srv.setContent(Buffer.alloc(6 * MiB, 1));
    await expect(reader.readVerified(4, MiB, target, checkOf(''))).rejects.toMatchObject({
      code: 'SOURCE_CHANGED',
    });
    await reader.close();
  });
});
