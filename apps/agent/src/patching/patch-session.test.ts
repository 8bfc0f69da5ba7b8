import { randomUUID } from 'node:crypto';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { MiB, type PatchSessionPlan } from '@freeloader/protocol';
import { SourcePolicy } from '@freeloader/sources';
import { LOOPBACK_SOURCES, startTestServer, type TestServer } from '@freeloader/sources/testing';
import { ManagerClient } from '../manager-client.js';
import { PatchSession } from './patch-session.js';
import { PeerClient } from './peer-client.js';

const servers: TestServer[] = [];
afterAll(async () => Promise.all(servers.map((s) => s.close())));

/** A one-node session over a real source; the manager is unreachable (reports are best effort). */
async function session(budgetBytes: number) {
  const srv = await startTestServer({ size: 64 * MiB, seed: 5 });
  servers.push(srv);
  const me = randomUUID();
  const plan: PatchSessionPlan = {
    plan: {
      sessionId: randomUUID(),
      datasetId: randomUUID(),
      firstMorsel: 0,
      endMorsel: 64,
      requestSize: MiB,
      nodes: [{ id: me, url: 'http://127.0.0.1:9' }],
      etag: srv.etag,
    },
    source: {
      uri: srv.url,
      size: 64 * MiB,
      etag: srv.etag,
      lastModified: null,
      acceptsRanges: true,
    },
    morselSize: MiB,
    writeCapability: 'unused',
    hashesFrom: 64,
  };
  const s = new PatchSession(plan, {
    me,
    manager: new ManagerClient('http://127.0.0.1:9'),
    peers: new PeerClient(),
    log: pino({ level: 'silent' }),
    budgetBytes,
    // The source is a test server on loopback, allowed on purpose.
    sourcePolicy: new SourcePolicy(LOOPBACK_SOURCES),
    onClosed: () => undefined,
  });
  s.start();
  return { srv, s };
}

const ranges = (srv: TestServer) =>
  srv.seen.map((r) => String(r.headers.range ?? '')).filter((r) => r.startsWith('bytes='));

describe('PatchSession', () => {
  it('stays within its lookahead, and reads a far-ahead morsel on demand', async () => {
    const { srv, s } = await session(MiB); // one node, a 1 MiB budget: one morsel ahead
    const first = await s.serve(0, 5_000);
    expect(first.data.equals(srv.content.subarray(0, MiB))).toBe(true);
    s.delivered(0);
    const far = await s.serve(50, 5_000);
    expect(far.data.equals(srv.content.subarray(50 * MiB, 51 * MiB))).toBe(true);
    // The download never ran past the frontier's lookahead: nothing between was fetched.
    const asked = ranges(srv).map((r) => Number(/^bytes=(\d+)/.exec(r)![1]) / MiB);
    expect(asked.filter((m) => m > 2 && m !== 50)).toEqual([]);
    await s.close();
  });

  it('fails every reader with SOURCE_CHANGED when the source changes', async () => {
    const { srv, s } = await session(MiB);
    await s.serve(0, 5_000);
    srv.setContent(Buffer.alloc(64 * MiB, 3));
    s.delivered(0);
    // The next request carries If-Match with the old ETag: 412.
    await expect(s.serve(1, 5_000)).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
  });
});
