import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import {
  MiB,
  sealMorsel,
  type MorselHash,
  type PatchHashes,
  type PatchSessionPlan,
} from '@freeloader/protocol';
import { SourcePolicy } from '@freeloader/sources';
import { LOOPBACK_SOURCES, startTestServer, type TestServer } from '@freeloader/sources/testing';
import { ManagerClient } from '../manager-client.js';
import { sha256Hex } from '../test/data-cluster.js';
import { PatchSession } from './patch-session.js';
import { PeerClient } from './peer-client.js';

const servers: TestServer[] = [];
afterAll(async () => Promise.all(servers.map((s) => s.close())));

/**
 * A one-node session over a real source of `morsels` MiB; the manager is unreachable (reports
 * are best effort) unless `managerUrl` is given.
 */
async function session(
  budgetBytes: number,
  opts: { morsels?: number; hashesFrom?: number; dataKey?: string; managerUrl?: string } = {},
) {
  const morsels = opts.morsels ?? 64;
  const srv = await startTestServer({ size: morsels * MiB, seed: 5 });
  servers.push(srv);
  const me = randomUUID();
  const plan: PatchSessionPlan = {
    plan: {
      sessionId: randomUUID(),
      datasetId: randomUUID(),
      firstMorsel: 0,
      endMorsel: morsels,
      requestSize: MiB,
      nodes: [{ id: me, url: 'http://127.0.0.1:9' }],
      etag: srv.etag,
    },
    source: {
      uri: srv.url,
      size: morsels * MiB,
      etag: srv.etag,
      lastModified: null,
      acceptsRanges: true,
    },
    morselSize: MiB,
    writeCapability: 'unused',
    hashesFrom: opts.hashesFrom ?? morsels,
    ...(opts.dataKey ? { dataKey: opts.dataKey } : {}),
  };
  const s = new PatchSession(plan, {
    me,
    manager: new ManagerClient(opts.managerUrl ?? 'http://127.0.0.1:9'),
    peers: new PeerClient(),
    log: pino({ level: 'silent' }),
    budgetBytes,
    // The source is a test server on loopback, allowed on purpose.
    sourcePolicy: new SourcePolicy(LOOPBACK_SOURCES),
    onClosed: () => undefined,
  });
  s.start();
  return { srv, s, plan };
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

  it('encrypted: serves the plain bytes, reports the hash and tag of a sealed copy', async () => {
    // A real HTTP manager stand-in that records the hash reports.
    const reports: MorselHash[] = [];
    const manager = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        if (req.url?.endsWith('/hashes')) reports.push(...(JSON.parse(body) as PatchHashes).hashes);
        res.setHeader('content-type', 'application/json');
        res.end('{"ok":true}');
      });
    });
    await new Promise<void>((r) => manager.listen(0, '127.0.0.1', r));
    const key = randomBytes(32);
    try {
      const { port } = manager.address() as AddressInfo;
      const { srv, s, plan } = await session(4 * MiB, {
        morsels: 4,
        hashesFrom: 1,
        dataKey: key.toString('base64'),
        managerUrl: `http://127.0.0.1:${port}`,
      });
      for (let m = 0; m < 4; m++) {
        const got = await s.serve(m, 5_000);
        const plain = srv.content.subarray(m * MiB, (m + 1) * MiB);
        expect(got.data.equals(plain)).toBe(true);
        s.delivered(m);
      }
      await s.close();
      const datasetId = plan.plan.datasetId;
      expect(reports.map((h) => h.index).sort()).toEqual([1, 2, 3]);
      for (const h of reports) {
        const sealed = Buffer.from(srv.content.subarray(h.index * MiB, (h.index + 1) * MiB));
        const tag = sealMorsel(key, datasetId, h.index, sealed).toString('hex');
        expect(h).toEqual({ index: h.index, sha256: sha256Hex(sealed), tag });
      }
    } finally {
      manager.close();
    }
  });
});
