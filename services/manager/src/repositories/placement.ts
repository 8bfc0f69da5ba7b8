import fp from 'fastify-plugin';
import type pg from 'pg';
import {
  FreeLoaderError,
  morselsOfDonor,
  SHA256_BYTES,
  MORSEL_TAG_BYTES,
  type AgentHolding,
  type DatasetState,
  type Extent,
  type MorselHash,
} from '@freeloader/protocol';
import { inTransaction, type Queryable } from '../db/pool.js';
import {
  DIGESTS_PER_CHUNK,
  getDigests,
  putDigests,
  putDigestsAt,
  type DigestTable,
} from './digest-rows.js';

/** Digests per `morsel_hashes` row. */
export const HASHES_PER_CHUNK = DIGESTS_PER_CHUNK;
const HASHES: DigestTable = {
  table: 'morsel_hashes',
  column: 'hashes',
  width: SHA256_BYTES,
  what: 'SHA-256 digest',
};
const TAGS: DigestTable = {
  table: 'morsel_tags',
  column: 'tags',
  width: MORSEL_TAG_BYTES,
  what: 'AES-GCM tag',
};

type Db = pg.Pool | pg.PoolClient;

interface ExtentRow {
  copy: number;
  first: number;
  count: number;
  unit: number;
  phase: number;
  donors: string[];
}

/** Reject extents that would make `donorOf` wrong: bad numbers or overlaps within a copy. */
export function checkExtents(extents: readonly Extent[]): void {
  const byCopy = new Map<number, Extent[]>();
  for (const e of extents) {
    const ints = [e.copy, e.first, e.count, e.unit, e.phase];
    if (!ints.every(Number.isSafeInteger) || e.copy < 0 || e.first < 0 || e.phase < 0) {
      throw new FreeLoaderError('VALIDATION_FAILED', 'extent numbers must be integers >= 0');
    }
    if (e.count < 1 || e.unit < 1 || e.donors.length === 0) {
      throw new FreeLoaderError('VALIDATION_FAILED', 'an extent needs count, unit and donors');
    }
    byCopy.set(e.copy, [...(byCopy.get(e.copy) ?? []), e]);
  }
  for (const [copy, list] of byCopy) {
    list.sort((a, b) => a.first - b.first);
    for (let i = 1; i < list.length; i++) {
      const prev = list[i - 1]!;
      if (list[i]!.first < prev.first + prev.count) {
        throw new FreeLoaderError('VALIDATION_FAILED', `extents of copy ${copy} overlap`);
      }
    }
  }
}

/**
 * Replace a dataset's placement with `extents`, atomically.
 *
 * @example await setPlacement(pool, datasetId, [{ copy: 0, first: 0, count: 10, unit: 1, phase: 0, donors: [a, b] }])
 */
export async function setPlacement(
  db: Db,
  datasetId: string,
  extents: readonly Extent[],
): Promise<void> {
  checkExtents(extents);
  await inTransaction(db, async (tx) => {
    await tx.query('DELETE FROM placement_extents WHERE dataset_id = $1', [datasetId]);
    if (extents.length === 0) return;
    await tx.query(
      `INSERT INTO placement_extents (dataset_id, copy, first, count, unit, phase, donors)
       SELECT $1, e.copy, e.first, e.count, e.unit, e.phase,
              ARRAY(SELECT jsonb_array_elements_text(e.donors))::uuid[]
       FROM jsonb_to_recordset($2::jsonb)
         AS e(copy int, first bigint, count bigint, unit int, phase int, donors jsonb)`,
      [datasetId, JSON.stringify(extents)],
    );
  });
}

/** A dataset's extents, ordered by copy then first morsel. */
export async function getPlacement(db: Queryable, datasetId: string): Promise<Extent[]> {
  const { rows } = await db.query<ExtentRow>(
    `SELECT copy, first, count, unit, phase, donors::text[] AS donors FROM placement_extents
     WHERE dataset_id = $1 ORDER BY copy, first`,
    [datasetId],
  );
  return rows.map((r) => ({ ...r }));
}

/** The extents of each of `datasetIds` (ordered by copy, then first morsel). */
export async function getPlacements(
  db: Queryable,
  datasetIds: readonly string[],
): Promise<Map<string, Extent[]>> {
  const out = new Map<string, Extent[]>(datasetIds.map((id) => [id, []]));
  if (datasetIds.length === 0) return out;
  const { rows } = await db.query<ExtentRow & { dataset_id: string }>(
    `SELECT dataset_id, copy, first, count, unit, phase, donors::text[] AS donors
     FROM placement_extents WHERE dataset_id = ANY($1::uuid[]) ORDER BY dataset_id, copy, first`,
    [datasetIds],
  );
  for (const { dataset_id, ...e } of rows) out.get(dataset_id)?.push(e);
  return out;
}

/**
 * Store SHA-256 digests for morsels [first, first + hashes.length / 32), merging into the
 * 4096-digest rows; digests not yet known read back as zeros.
 */
export async function putHashes(
  db: Db,
  datasetId: string,
  first: number,
  hashes: Buffer,
): Promise<void> {
  await putDigests(db, HASHES, datasetId, first, hashes);
}

/** Digests of morsels [from, from + count) (all known ones by default), 32 bytes each. */
export async function getHashes(
  db: Queryable,
  datasetId: string,
  from = 0,
  count?: number,
): Promise<Buffer> {
  return getDigests(db, HASHES, datasetId, from, count);
}

/**
 * AES-GCM tags of an encrypted dataset's morsels [from, from + count) (all known ones by
 * default), 16 bytes each; as {@link getHashes}, only the rows the range touches are read.
 */
export const getTags = (db: Queryable, datasetId: string, from = 0, count?: number) =>
  getDigests(db, TAGS, datasetId, from, count);

/** Every donor named by a dataset's placement. */
export async function donorsOfDataset(db: Queryable, datasetId: string): Promise<string[]> {
  const { rows } = await db.query<{ donor: string }>(
    `SELECT DISTINCT unnest(donors)::text AS donor FROM placement_extents WHERE dataset_id = $1`,
    [datasetId],
  );
  return rows.map((r) => r.donor);
}

/** What placement says `agentId` holds, per dataset, with each dataset's state. */
export async function holdingsOf(db: Queryable, agentId: string): Promise<AgentHolding[]> {
  const { rows } = await db.query<
    ExtentRow & { dataset_id: string; morsel_size: number; state: DatasetState }
  >(
    `SELECT e.dataset_id, d.morsel_size, d.state, e.copy, e.first, e.count, e.unit, e.phase,
            e.donors::text[] AS donors
     FROM placement_extents e JOIN datasets d ON d.id = e.dataset_id
     WHERE $1::uuid = ANY(e.donors)
     ORDER BY e.dataset_id, e.first`,
    [agentId],
  );
  const byDataset = new Map<string, AgentHolding & { set: Set<number> }>();
  for (const r of rows) {
    const entry = byDataset.get(r.dataset_id) ?? {
      id: r.dataset_id,
      state: r.state,
      morselSize: r.morsel_size,
      morsels: [],
      set: new Set<number>(),
    };
    for (const m of morselsOfDonor(r, agentId)) entry.set.add(m);
    byDataset.set(r.dataset_id, entry);
  }
  return [...byDataset.values()].map(({ set, ...h }) => ({
    ...h,
    morsels: [...set].sort((a, b) => a - b),
  }));
}

/**
 * Store hashes reported as `{index, sha256 hex, tag?}` (import progress): hashes and (encrypted
 * datasets) tags written in one transaction, each 4096-morsel row once.
 */
export async function putMorselHashes(
  db: Db,
  datasetId: string,
  hashes: readonly MorselHash[],
): Promise<void> {
  if (hashes.length === 0) return;
  const digests = hashes.map((h) => {
    const digest = Buffer.from(h.sha256, 'hex');
    if (digest.length !== SHA256_BYTES) {
      throw new FreeLoaderError('VALIDATION_FAILED', `morsel ${h.index}: not a SHA-256 digest`);
    }
    return { index: h.index, digest };
  });
  const tags = hashes.flatMap((h) =>
    h.tag === undefined ? [] : [{ index: h.index, digest: Buffer.from(h.tag, 'hex') }],
  );
  await inTransaction(db, async (tx) => {
    await putDigestsAt(tx, HASHES, datasetId, digests);
    await putDigestsAt(tx, TAGS, datasetId, tags);
  });
}

/** The placement helpers bound to one pool, as `app.placementRepo`. */
export function createPlacementRepo(pool: pg.Pool) {
  return {
    setPlacement: (datasetId: string, extents: readonly Extent[]) =>
      setPlacement(pool, datasetId, extents),
    getPlacement: (datasetId: string) => getPlacement(pool, datasetId),
    putHashes: (datasetId: string, first: number, hashes: Buffer) =>
      putHashes(pool, datasetId, first, hashes),
    getHashes: (datasetId: string, from?: number, count?: number) =>
      getHashes(pool, datasetId, from, count),
    getTags: (datasetId: string, from?: number, count?: number) =>
      getTags(pool, datasetId, from, count),
    donorsOfDataset: (datasetId: string) => donorsOfDataset(pool, datasetId),
    holdingsOf: (agentId: string) => holdingsOf(pool, agentId),
    putMorselHashes: (datasetId: string, hashes: readonly MorselHash[]) =>
      putMorselHashes(pool, datasetId, hashes),
  };
}
export type PlacementRepo = ReturnType<typeof createPlacementRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    placementRepo: PlacementRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('placementRepo', createPlacementRepo(app.pg));
  },
  { name: 'placement-repo', dependencies: ['postgres'] },
);
