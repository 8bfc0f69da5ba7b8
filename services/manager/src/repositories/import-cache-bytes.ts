import type { Queryable } from '../db/pool.js';

/** Record that an import caches only `cacheBytes` of the dataset (its model prefix). */
export async function setImportCacheBytes(
  db: Queryable,
  datasetId: string,
  cacheBytes: number,
): Promise<void> {
  await db.query('UPDATE datasets SET import_cache_bytes = $2 WHERE id = $1', [
    datasetId,
    cacheBytes,
  ]);
}

/** The prefix an import was sized to cache; null when it caches the whole dataset. */
export async function importCacheBytesOf(db: Queryable, datasetId: string): Promise<number | null> {
  const { rows } = await db.query<{ n: number | null }>(
    'SELECT import_cache_bytes AS n FROM datasets WHERE id = $1',
    [datasetId],
  );
  return rows[0]?.n ?? null;
}
