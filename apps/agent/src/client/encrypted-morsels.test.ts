import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB, morselsOfDonor, type DatasetMap } from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { waitFor, waitForAgentState } from '../test/cluster-harness.js';
import { flipByte } from '../test/damage.js';
import { sha256Hex, startDataCluster, type DataCluster } from '../test/data-cluster.js';
import { donorDataFile, markedContent, markersOnDonors } from '../test/plaintext-marker.js';

// Encrypted morsels (issue 17 item 3) with real agents, a real manager on PostgreSQL and real
// store files: a donor owner grepping his store finds nothing of the data; a dataset imported
// with encrypt=false (the opt-out) shows the same grep does find it, so the first check can fail.
let c: DataCluster;
const servers: TestServer[] = [];

beforeAll(async () => {
  c = await startDataCluster(3, '64MiB');
}, 180_000);

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await c?.close();
});

async function importMarked(name: string, encrypt: boolean, replicas = 1) {
  await Promise.all(c.agents.map((a) => waitForAgentState(c.tm, a.agentId, 'live')));
  const src = await startTestServer({ content: markedContent(6 * MiB + 321, name.length) });
  servers.push(src);
  // Round-robin: the flipped-byte test needs morsels on donor 0; after the first get the default
  // (predictive) can give a donor measured slow under load none.
  const d = await c.importAndWait({
    uri: src.url,
    name,
    width: 3,
    replicas,
    encrypt,
    policy: 'round-robin',
  });
  expect(d.state).toBe('ready');
  return { src, id: d.id };
}

const dataFile = (i: number, id: string): string => donorDataFile(c.agentDirs[i]!, id);
const markersOn = (id: string): Promise<number> => markersOnDonors(c.agentDirs, id);

const mapOf = (id: string): Promise<DatasetMap> =>
  c.tm.admin.request<DatasetMap>('GET', `/datasets/${id}/map`);

describe('encrypted morsels', () => {
  it('donors store ciphertext only, the map gives the reader key and tags, get is byte-identical', async () => {
    const { src, id } = await importMarked('enc/secret.bin', true);
    const map = await mapOf(id);
    expect(Buffer.from(map.dataKey!, 'base64')).toHaveLength(32);
    expect(map.tags).toHaveLength(7 * 32);
    expect(await markersOn(id)).toBe(0);
    // The stored hash is of the ciphertext: donors verify without the key.
    expect(map.hashes.slice(0, 64)).not.toBe(sha256Hex(src.content.subarray(0, MiB)));
    expect((await c.get(id)).sha256).toBe(sha256Hex(src.content));
  }, 120_000);

  it('the opt-out stores the data in clear (so the grep above can find it) and reads the same', async () => {
    const { src, id } = await importMarked('enc/public.bin', false);
    const map = await mapOf(id);
    expect(map.dataKey).toBeUndefined();
    expect(map.tags).toBeUndefined();
    expect(await markersOn(id)).toBeGreaterThanOrEqual(6 * 16);
    expect(map.hashes.slice(0, 64)).toBe(sha256Hex(src.content.subarray(0, MiB)));
    expect((await c.get(id)).sha256).toBe(sha256Hex(src.content));
  }, 120_000);

  it('a flipped ciphertext byte is rejected; the morsel comes from the source, sealed and checked', async () => {
    // One copy: the reader must ask donor 0 for its morsel, and only the source has it whole.
    const { src, id } = await importMarked('enc/flipped.bin', true, 1);
    const map = await mapOf(id);
    const donor = c.agents[0]!.agentId;
    const held = [...new Set(map.extents.flatMap((e) => morselsOfDonor(e, donor)))].sort(
      (a, b) => a - b,
    );
    // Slots follow index order: slot 0 holds donor 0's first morsel.
    await flipByte(dataFile(0, id), 4321);
    const out = await c.get(id);
    expect(out.sha256).toBe(sha256Hex(src.content));
    expect(out.donorFailures).toBeGreaterThanOrEqual(1);
    // The client reported the bad copy: its SHA-256 check failed before any decryption.
    await waitFor(
      'the bad copy in the map',
      async () => {
        const bad = (await mapOf(id)).badCopies ?? [];
        return bad.some((b) => b.donor === donor && b.morsel === held[0]) || undefined;
      },
      60_000,
      200,
    );
  }, 120_000);
});
