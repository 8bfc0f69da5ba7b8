import { FreeLoaderError } from '@freeloader/protocol';
import { inTransaction, type Queryable } from '../db/pool.js';
import type pg from 'pg';

/** Digests per row of a per-morsel digest table (morsel_hashes, morsel_tags). */
export const DIGESTS_PER_CHUNK = 4096;

/**
 * A table of fixed-width per-morsel digests kept 4096 to a row: `table(dataset_id, chunk,
 * <column> bytea)`. Names are constants below, never input.
 */
export interface DigestTable {
  table: 'morsel_hashes' | 'morsel_tags';
  column: 'hashes' | 'tags';
  /** Bytes per digest. */
  width: number;
  /** What a digest is, for error messages. */
  what: string;
}

type Db = pg.Pool | pg.PoolClient;

/** One morsel's digest, to store. */
export interface DigestAt {
  index: number;
  digest: Buffer;
}

/**
 * Store digests for morsels [first, first + digests.length / width), merging into the
 * 4096-digest rows; digests not yet known read back as zeros.
 *
 * @example await putDigests(pool, HASHES, id, 4095, twoDigests) // spans rows 0 and 1
 */
export async function putDigests(
  db: Db,
  spec: DigestTable,
  datasetId: string,
  first: number,
  digests: Buffer,
): Promise<void> {
  const { column, width } = spec;
  if (digests.length % width !== 0 || !Number.isSafeInteger(first) || first < 0) {
    throw new FreeLoaderError('VALIDATION_FAILED', `${column} must be whole ${spec.what}s`);
  }
  const entries = Array.from({ length: digests.length / width }, (_, i) => ({
    index: first + i,
    digest: digests.subarray(i * width, (i + 1) * width),
  }));
  await putDigestsAt(db, spec, datasetId, entries);
}

/**
 * Store digests at any morsel indices, merging into the 4096-digest rows: each row touched is
 * locked, read and written once, however the indices interleave (a repeated index keeps the
 * last). Why: a donor's import report holds every W-th morsel of its stripes; stored as runs of
 * consecutive morsels, each morsel rewrote its whole 128 KiB row under the row's lock, and a
 * 4 GiB import from 4 donors kept the manager and PostgreSQL busy (0.6 + 0.6 of the 2 cores,
 * reports queued behind the lock for 50 s) for minutes after the import was done.
 *
 * @example await putDigestsAt(pool, HASHES, id, [{ index: 7, digest: a }, { index: 3, digest: b }])
 */
export async function putDigestsAt(
  db: Db,
  spec: DigestTable,
  datasetId: string,
  entries: readonly DigestAt[],
): Promise<void> {
  const { table, column, width } = spec;
  const byChunk = new Map<number, DigestAt[]>();
  for (const e of entries) {
    if (!Number.isSafeInteger(e.index) || e.index < 0 || e.digest.length !== width) {
      throw new FreeLoaderError('VALIDATION_FAILED', `${column} must be whole ${spec.what}s`);
    }
    const chunk = Math.floor(e.index / DIGESTS_PER_CHUNK);
    const here = byChunk.get(chunk);
    if (here) here.push(e);
    else byChunk.set(chunk, [e]);
  }
  if (byChunk.size === 0) return;
  // Ascending, so that transactions touching several rows lock them in one order.
  const chunks = [...byChunk.keys()].sort((a, b) => a - b);
  await inTransaction(db, async (tx) => {
    // Make sure every chunk row exists before locking: FOR UPDATE locks nothing on a missing
    // row, and two donors reporting into the same new chunk would overwrite each other.
    await tx.query(
      `INSERT INTO ${table} (dataset_id, chunk, ${column})
       SELECT $1, c, ''::bytea FROM unnest($2::int[]) AS c
       ON CONFLICT (dataset_id, chunk) DO NOTHING`,
      [datasetId, chunks],
    );
    const { rows } = await tx.query<{ chunk: number; digests: Buffer }>(
      `SELECT chunk, ${column} AS digests FROM ${table}
       WHERE dataset_id = $1 AND chunk = ANY($2::int[]) ORDER BY chunk FOR UPDATE`,
      [datasetId, chunks],
    );
    const existing = new Map(rows.map((r) => [r.chunk, r.digests]));
    for (const chunk of chunks) {
      const here = byChunk.get(chunk) ?? [];
      const base = chunk * DIGESTS_PER_CHUNK;
      const old = existing.get(chunk) ?? Buffer.alloc(0);
      const end = here.reduce((n, e) => Math.max(n, (e.index - base + 1) * width), 0);
      const merged = Buffer.alloc(Math.max(old.length, end));
      old.copy(merged);
      for (const e of here) e.digest.copy(merged, (e.index - base) * width);
      await tx.query(
        `INSERT INTO ${table} (dataset_id, chunk, ${column}) VALUES ($1, $2, $3)
         ON CONFLICT (dataset_id, chunk) DO UPDATE SET ${column} = EXCLUDED.${column}`,
        [datasetId, chunk, merged],
      );
    }
  });
}

/**
 * Digests of morsels [from, from + count) (all known ones by default), `width` bytes each.
 * Only the rows the range touches are read: a page of a 1 TiB dataset reads one or two rows,
 * not 256.
 */
export async function getDigests(
  db: Queryable,
  spec: DigestTable,
  datasetId: string,
  from = 0,
  count?: number,
): Promise<Buffer> {
  const { table, column, width } = spec;
  if (count === 0) return Buffer.alloc(0);
  const firstChunk = Math.floor(from / DIGESTS_PER_CHUNK);
  const lastChunk = count === undefined ? null : Math.floor((from + count - 1) / DIGESTS_PER_CHUNK);
  const { rows } = await db.query<{ chunk: number; digests: Buffer }>(
    `SELECT chunk, ${column} AS digests FROM ${table}
     WHERE dataset_id = $1 AND chunk >= $2 AND ($3::int IS NULL OR chunk <= $3) ORDER BY chunk`,
    [datasetId, firstChunk, lastChunk],
  );
  const chunkBytes = DIGESTS_PER_CHUNK * width;
  const base = firstChunk * chunkBytes;
  const last = rows.at(-1);
  const known = last ? last.chunk * chunkBytes + last.digests.length - base : 0;
  const all = Buffer.alloc(Math.max(0, known));
  for (const r of rows) r.digests.copy(all, r.chunk * chunkBytes - base);
  const start = from * width - base;
  const end = count === undefined ? all.length : Math.min(all.length, start + count * width);
  return all.subarray(Math.min(start, all.length), end);
}
