import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TransferView } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { waitFor } from '../test/cluster-harness.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';

// The agent checks every connection of an import itself. The manager and the agent allow the
// name `localhost` only; a source there answers the manager's probe (HEAD) itself but redirects
// the agent's ranged reads to 127.0.0.1 — an address nobody allowed. The agent must refuse the
// redirect (SOURCE_FORBIDDEN) whatever the job says, and follow it once the admin allows it.
let c: DataCluster;
let data: TestServer;
let front: Server;
let frontUrl: string;

beforeAll(async () => {
  c = await startDataCluster(1, '64MiB', { sourceAllow: ['localhost'] });
  data = await startTestServer({ size: 3 * 1024 * 1024 + 5, seed: 71 });
  front = createServer((req, res) => {
    if (req.method === 'HEAD') {
      void fetch(data.url, { method: 'HEAD' }).then((r) => {
        const keep = ['content-length', 'accept-ranges', 'etag', 'last-modified'];
        res.writeHead(200, Object.fromEntries(keep.map((k) => [k, r.headers.get(k) ?? ''])));
        res.end();
      });
      return;
    }
    res.writeHead(302, { location: data.url }).end();
  });
  await new Promise<void>((r) => front.listen(0, '127.0.0.1', r));
  frontUrl = `http://localhost:${(front.address() as AddressInfo).port}/data.bin`;
}, 180_000);

afterAll(async () => {
  await new Promise((r) => front?.close(r));
  await data?.close();
  await c?.close();
});

const importError = async (id: string) =>
  (await c.tm.admin.request<TransferView[]>('GET', `/transfers?datasetId=${id}`)).find(
    (j) => j.kind === 'import',
  )?.error;

describe("an agent's import under the source policy", () => {
  it('refuses a redirect to loopback, then follows it once the admin allows it', async () => {
    const refused = await c.importAndWait({ uri: frontUrl, name: 'policy/refused.bin' });
    expect(refused.state).toBe('failed');
    expect(await importError(refused.id)).toMatch(/SOURCE_FORBIDDEN|may not reach/);
    expect(data.requests).toBe(1); // the HEAD forwarded above, never an agent's read

    await c.tm.admin.request('PUT', '/settings/sources', { allow: ['127.0.0.1'] });
    // The agent hears of it with its next heartbeat.
    const ready = await waitFor(
      'an import after the admin allowed 127.0.0.1',
      async () => {
        const d = await c.importAndWait({ uri: frontUrl, name: `policy/ok-${Date.now()}.bin` });
        return d.state === 'ready' ? d : undefined;
      },
      60_000,
      500,
    );
    expect(ready.state).toBe('ready');
    const got = await c.get(ready.path);
    expect(got.sha256).toBe(sha256Hex(data.content));
  });
});
