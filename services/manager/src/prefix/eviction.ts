import type { FastifyInstance } from 'fastify';
import { bytesOverWatermark, planEviction, type CachedDataset } from '@freeloader/striping';
import type { CachedDatasetView, EvictionTotals } from '@freeloader/protocol';
import type { EvictionCause } from '../repositories/evictions.js';
import { isoOrNull } from '../repositories/rows.js';
import { prefixFromStats } from './prefix-sizing.js';
import { sourceKey } from './source-key.js';
import { trimDataset, type TrimResult } from './trim-dataset.js';

/** Eviction starts when cache use passes this fraction of the donated space… */
export const HIGH_WATERMARK = envFraction('FREELOADER_CACHE_HIGH_WATERMARK', 0.9);
/** …and stops once use is back under this one. */
export const LOW_WATERMARK = envFraction('FREELOADER_CACHE_LOW_WATERMARK', 0.75);

function envFraction(name: string, fallback: number): number {
  const v = Number(process.env[name]);
  return Number.isFinite(v) && v > 0 && v <= 1 ? v : fallback;
}

/** Every dataset with a source, its cached part, model prefix, pin and recency. */
export async function cachedDatasets(app: FastifyInstance): Promise<CachedDatasetView[]> {
  return (await cachedWithMorsels(app)).map(({ morselSize: _, ...view }) => view);
}

/** {@link cachedDatasets} with each dataset's morsel size (what eviction needs to cut it). */
async function cachedWithMorsels(
  app: FastifyInstance,
): Promise<(CachedDatasetView & { morselSize: number })[]> {
  const { rows } = await app.pg.query<{
    id: string;
    path: string;
    source_uri: string | null;
    size_bytes: number;
    morsel_size: number;
    cached_bytes: number;
    pinned: boolean;
    last_access_at: Date | null;
    read_count: number;
    extending_to: number | null;
  }>(
    `SELECT d.id, CASE WHEN f.path = '' THEN d.name ELSE f.path || '/' || d.name END AS path,
            d.source_uri, d.size_bytes, d.morsel_size, d.cached_bytes, d.pinned,
            coalesce(d.last_access_at, d.created_at) AS last_access_at,
            d.read_count::int AS read_count, (d.extension->>'toBytes')::bigint AS extending_to
     FROM datasets d CROSS JOIN LATERAL folder_path(d.folder_id) AS f(path)
     WHERE d.state = 'ready'
     ORDER BY coalesce(d.last_access_at, d.created_at), d.id`,
  );
  const stats = new Map((await app.prefixCache.sources.list()).map((s) => [s.source, s]));
  const clientRate = await app.prefixCache.clients.rateOf();
  return rows.map((r) => {
    const key = sourceKey(r.source_uri);
    return {
      id: r.id,
      morselSize: r.morsel_size,
      path: r.path,
      source: key,
      sizeBytes: r.size_bytes,
      cachedBytes: r.cached_bytes,
      // A dataset without a source cannot be patched: all of it is its prefix.
      prefixBytes: key
        ? prefixFromStats(r.size_bytes, r.morsel_size, stats.get(key) ?? null, clientRate)
        : r.size_bytes,
      pinned: r.pinned,
      lastAccessAt: isoOrNull(r.last_access_at),
      reads: r.read_count,
      ...(r.extending_to !== null ? { extendingToBytes: r.extending_to } : {}),
    };
  });
}

/** Donated space of the storage donors (not revoked, not bandwidth-only) and what is in use. */
export async function cacheSpace(
  app: FastifyInstance,
): Promise<{ capacityBytes: number; usedBytes: number }> {
  const { rows } = await app.pg.query<{ capacity: number; used: number }>(
    `SELECT coalesce(sum(a.quota_bytes), 0)::bigint AS capacity,
            coalesce(sum(a.used_bytes), 0)::bigint
              + coalesce((SELECT sum(bytes) FROM reservations
                          WHERE state = 'active' AND expires_at > now()), 0)::bigint AS used
     FROM agents a WHERE a.revoked_at IS NULL AND NOT a.bandwidth_only`,
  );
  return { capacityBytes: rows[0]!.capacity, usedBytes: rows[0]!.used };
}

/**
 * Free at least `needBytes` (seed 002 §4.1): trim over-cached datasets back to their model
 * prefix by LRU, then evict whole prefixes by LRU; pinned datasets are never touched. Returns
 * what was cut (it may be less than asked when everything left is pinned).
 */
export async function evictBytes(
  app: FastifyInstance,
  needBytes: number,
  cause?: EvictionCause,
): Promise<TrimResult[]> {
  if (!(needBytes > 0)) return [];
  const plan = planEviction(await evictionEntries(app), needBytes);
  const done: TrimResult[] = [];
  for (const step of plan.steps) {
    const cut = await trimDataset(app, step.id, step.toBytes, cause);
    if (cut) done.push(cut);
  }
  if (done.length > 0) {
    app.log.info(
      { need: needBytes, freed: done.reduce((s, c) => s + c.freedBytes, 0), steps: done.length },
      'cache eviction',
    );
  }
  return done;
}

/** What eviction may cut: every ready dataset as the LRU planner sees it, with its morsel size. */
export async function evictionEntries(
  app: FastifyInstance,
): Promise<(CachedDataset & { sizeBytes: number; morselSize: number })[]> {
  return (await cachedWithMorsels(app)).map((d) => ({
    id: d.id,
    sizeBytes: d.sizeBytes,
    morselSize: d.morselSize,
    cachedBytes: d.cachedBytes,
    prefixBytes: d.prefixBytes,
    lastAccess: Date.parse(d.lastAccessAt ?? '') || 0,
    pinned: d.pinned,
  }));
}

/** Above the high watermark, evict down to the low one. Returns what was cut. */
export async function watermarkSweep(app: FastifyInstance): Promise<TrimResult[]> {
  const { capacityBytes, usedBytes } = await cacheSpace(app);
  return evictBytes(
    app,
    bytesOverWatermark(usedBytes, capacityBytes, HIGH_WATERMARK, LOW_WATERMARK),
    { reason: 'watermark' },
  );
}

/** Counts and bytes of every trim, eviction and extension so far. */
export async function evictionTotals(app: FastifyInstance): Promise<EvictionTotals> {
  const { rows } = await app.pg.query<{
    trims: number;
    trimmed: number;
    evictions: number;
    evicted: number;
    extensions: number;
    extended: number;
    last: Date | null;
  }>(
    `SELECT count(*) FILTER (WHERE kind = 'trim')::int AS trims,
            coalesce(sum(bytes) FILTER (WHERE kind = 'trim'), 0)::bigint AS trimmed,
            count(*) FILTER (WHERE kind = 'evict')::int AS evictions,
            coalesce(sum(bytes) FILTER (WHERE kind = 'evict'), 0)::bigint AS evicted,
            count(*) FILTER (WHERE kind = 'extend')::int AS extensions,
            coalesce(sum(bytes) FILTER (WHERE kind = 'extend'), 0)::bigint AS extended,
            max(at) FILTER (WHERE kind <> 'extend') AS last
     FROM cache_evictions`,
  );
  const r = rows[0]!;
  return {
    trims: r.trims,
    trimmedBytes: r.trimmed,
    evictions: r.evictions,
    evictedBytes: r.evicted,
    extensions: r.extensions,
    extendedBytes: r.extended,
    lastAt: isoOrNull(r.last),
  };
}

/** Wait (bounded) until the delete jobs eviction queued have run, so donors really have room. */
export async function waitForDeletes(
  app: FastifyInstance,
  cuts: readonly Pick<TrimResult, 'datasetId'>[],
  timeoutMs = 15_000,
): Promise<void> {
  const ids = cuts.map((c) => c.datasetId);
  const deadline = Date.now() + timeoutMs;
  while (ids.length > 0 && Date.now() < deadline) {
    const { rows } = await app.pg.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM jobs
       WHERE kind = 'delete' AND dataset_id = ANY($1::uuid[]) AND state IN ('queued', 'running')`,
      [ids],
    );
    if (rows[0]!.n === 0) return;
    await new Promise((r) => setTimeout(r, 100));
  }
}
