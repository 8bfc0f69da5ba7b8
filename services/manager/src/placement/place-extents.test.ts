import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FreeLoaderError,
  KiB,
  morselsOfDonor,
  type ImportJobPayload,
  type ImportResponse,
} from '@freeloader/protocol';
import { startTestServer, type TestServer } from '@freeloader/sources/testing';
import { startHarness, type Harness } from '../test/harness.js';

// Real PostgreSQL and real HTTP sources; enrolled donors (live by their enrolment) that never
// run their jobs: what is checked is what the import queues and reserves.
const MORSEL = 64 * KiB;
/** Each donor has room for exactly this many morsels, so an import fills every donor. */
const MORSELS_PER_DONOR = 2;

let h: Harness;
let user: { authorization: string };
const servers: TestServer[] = [];

beforeAll(async () => {
  h = await startHarness();
  user = await h.login('scientist');
});
afterAll(async () => {
  await h?.close();
  for (const s of servers) await s.close();
});

async function enrollDonors(n: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    ids.push((await h.enroll({ quotaBytes: MORSELS_PER_DONOR * MORSEL })).agentId);
  }
  return ids;
}

/** Import a dataset that fills `donors` donors exactly; its jobs' payloads by agent. */
async function importFilling(
  donors: number,
): Promise<{ id: string; payloads: Map<string, ImportJobPayload> }> {
  const src = await startTestServer({ size: donors * MORSELS_PER_DONOR * MORSEL });
  servers.push(src);
  const res = await h.call({
    method: 'POST',
    url: '/api/v1/datasets',
    headers: user,
    payload: { uri: src.url, name: `scale/${donors}.bin`, replicas: 1, morselSize: MORSEL },
  });
  expect(res.statusCode, res.body).toBe(201);
  const id = res.json<ImportResponse>().dataset!.id;
  const { rows } = await h.app.pg.query<{ agent_id: string; payload: ImportJobPayload }>(
    `SELECT agent_id::text, payload FROM jobs WHERE dataset_id = $1 AND kind = 'import'`,
    [id],
  );
  return { id, payloads: new Map(rows.map((r) => [r.agent_id, r.payload])) };
}

const largest = (payloads: Map<string, ImportJobPayload>): number =>
  Math.max(...[...payloads.values()].map((p) => JSON.stringify(p).length));

describe('import job payloads', () => {
  it('carry only the receiving donor’s share, whatever the number of donors', async () => {
    const few = await enrollDonors(8);
    const small = await importFilling(8);
    expect(new Set(small.payloads.keys())).toEqual(new Set(few));
    const many = await enrollDonors(64);
    const large = await importFilling(64);
    expect(new Set(large.payloads.keys())).toEqual(new Set(many));

    // Every job names only its own donor, and together the jobs cover each morsel once.
    const covered: number[] = [];
    for (const [agentId, p] of large.payloads) {
      expect(p.donors.map((d) => d.id)).toEqual([agentId]);
      expect(p.extents.every((e) => e.donors.includes(agentId))).toBe(true);
      const mine = p.extents.flatMap((e) => morselsOfDonor(e, agentId));
      expect(mine).toHaveLength(MORSELS_PER_DONOR);
      covered.push(...mine);
    }
    expect(covered.sort((a, b) => a - b)).toEqual([...Array(64 * MORSELS_PER_DONOR).keys()]);

    // Eight times the donors: the largest job is the same size (within the digits of the
    // numbers in it), where carrying every extent and donor made it grow eightfold.
    expect(largest(large.payloads)).toBeLessThan(largest(small.payloads) * 1.1);
  });
});

describe('reserving an import’s space', () => {
  it('reserves every donor’s share in one go, or nothing when one donor lacks room', async () => {
    const [a, b, c] = await enrollDonors(3);
    const reserved = async (): Promise<number> => {
      const { rows } = await h.app.pg.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM reservations
         WHERE agent_id = ANY($1::uuid[]) AND state = 'active'`,
        [[a, b, c]],
      );
      return rows[0]!.n;
    };
    const tooMuch = new Map([
      [a!, MORSEL],
      [b!, MORSELS_PER_DONOR * MORSEL + 1],
      [c!, MORSEL],
    ]);
    const err = await h.app.reservationsRepo.reserveMany(tooMuch).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FreeLoaderError);
    expect((err as FreeLoaderError).code).toBe('NO_SPACE');
    expect((err as FreeLoaderError).message).toContain(b);
    expect(await reserved()).toBe(0);

    const fits = new Map([
      [a!, MORSEL],
      [b!, MORSELS_PER_DONOR * MORSEL],
      [c!, MORSEL],
    ]);
    await h.app.reservationsRepo.reserveMany(fits);
    expect(await reserved()).toBe(3);
    // b is now full: the next import touching it fails whole, a's and c's room stays free.
    await expect(
      h.app.reservationsRepo.reserveMany(
        new Map([
          [a!, MORSEL],
          [b!, 1],
        ]),
      ),
    ).rejects.toMatchObject({ code: 'NO_SPACE' });
    expect(await reserved()).toBe(3);
  });
});
