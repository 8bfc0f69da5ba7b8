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
  const { table, column, width } = spec;
  if (digests.length % width !== 0 || !Number.isSafeInteger(first) || first < 0) {
    throw new FreeLoaderError('VALIDATION_FAILED', `${column} must be whole ${spec.what}s`);
  }
  const count = digests.length / width;
  if (count === 0) return;
  const firstChunk = Math.floor(first / DIGESTS_PER_CHUNK);
  const lastChunk = Math.floor((first + count - 1) / DIGESTS_PER_CHUNK);
  await inTransaction(db, async (tx) => {
    // Make sure every chunk row exists before locking: FOR UPDATE locks nothing on a missing
    // row, and two donors reporting into the same new chunk would overwrite each other.
    await tx.query(
      `INSERT INTO ${table} (dataset_id, chunk, ${column})
       SELECT $1, c, ''::bytea FROM generate_series($2::int, $3::int) AS c
       ON CONFLICT (dataset_id, chunk) DO NOTHING`,
      [datasetId, firstChunk, lastChunk],
    );
    const { rows } = await tx.query<{ chunk: number; digests: Buffer }>(
      `SELECT chunk, ${column} AS digests FROM ${table}
       WHERE dataset_id = $1 AND chunk BETWEEN $2 AND $3 ORDER BY chunk FOR UPDATE`,
      [datasetId, firstChunk, lastChunk],
    );
    const existing = new Map(rows.map((r) => [r.chunk, r.digests]));
    for (let chunk = firstChunk; chunk <= lastChunk; chunk++) {
      const chunkStart = chunk * DIGESTS_PER_CHUNK;
      const from = Math.max(first, chunkStart);
      const to = Math.min(first + count, chunkStart + DIGESTS_PER_CHUNK);
      const old = existing.get(chunk) ?? Buffer.alloc(0);
      const merged = Buffer.alloc(Math.max(old.length, (to - chunkStart) * width));
      old.copy(merged);
      digests.copy(
        merged,
        (from - chunkStart) * width,
        (from - first) * width,
        (to - first) * width,
      );
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

/**
 * Digests reported one morsel at a time (`{index, digest}`), sorted into runs of consecutive
 * morsels; each run's digests concatenated (a repeated index keeps the last).
 *
 * @example runsOf([{index: 2, digest: a}, {index: 0, digest: b}, {index: 1, digest: c}])
 *   // → [{ first: 0, digests: b‖c‖a }]
 */
export function runsOf(
  reported: ReadonlyArray<{ index: number; digest: Buffer }>,
): Array<{ first: number; digests: Buffer }> {
  const sorted = [...reported].sort((a, b) => a.index - b.index);
  const runs: Array<{ first: number; digests: Buffer[] }> = [];
  for (const { index, digest } of sorted) {
    const run = runs.at(-1);
    if (run && run.first + run.digests.length === index) run.digests.push(digest);
    else if (run && run.first + run.digests.length - 1 === index)
      run.digests[run.digests.length - 1] = digest;
    else runs.push({ first: index, digests: [digest] });
  }
  return runs.map((r) => ({ first: r.first, digests: Buffer.concat(r.digests) }));
}
