import type { FastifyInstance } from 'fastify';
import { FreeLoaderError, MORSEL_SIZE, type SourceProbe } from '@freeloader/protocol';
import type { EvictionCause } from '../repositories/evictions.js';
import { evictBytes, cacheSpace, waitForDeletes } from './eviction.js';
import { prefixFromStats } from './prefix-sizing.js';
import { sourceKey } from './source-key.js';

export interface CachePlanned<P> {
  plan: P;
  /** Bytes the import caches: the whole dataset, or its model prefix. */
  cacheBytes: number;
}

const isNoSpace = (e: unknown) => e instanceof FreeLoaderError && e.code === 'NO_SPACE';

/**
 * The import policy of seed 002 §4.1: a dataset that fits in the free space is cached whole;
 * otherwise only its model prefix (seed §3.1) is, after eviction made room for it. A source
 * without Range support cannot be patched, so such a dataset is always cached whole. `plan`
 * places `bytes` of the dataset (the caller's placement policy); it throws NO_SPACE when the
 * donors cannot hold them, and this function then abandons prefix extensions in flight, evicts
 * and tries again.
 *
 * @example const { plan, cacheBytes } = await planCached(app, probe, who, 1 << 20, (n) => place(n));
 */
export async function planCached<P>(
  app: FastifyInstance,
  probe: SourceProbe,
  client: string,
  morselSize: number | undefined,
  plan: (bytes: number) => Promise<P> | P,
  forImport?: Omit<EvictionCause, 'reason'>,
): Promise<CachePlanned<P>> {
  try {
    return { plan: await plan(probe.size), cacheBytes: probe.size };
  } catch (e) {
    if (!isNoSpace(e)) throw e;
  }
  // Prefix extensions only use space nobody needs: an import takes it back before evicting.
  const yielded = await app.prefixCache.extensions.yieldSpace('an import needs the space');
  if (yielded.length > 0) {
    await waitForDeletes(
      app,
      yielded.map((datasetId) => ({ datasetId })),
    );
    try {
      return { plan: await plan(probe.size), cacheBytes: probe.size };
    } catch (e) {
      if (!isNoSpace(e)) throw e;
    }
  }
  const key = sourceKey(probe.uri);
  const stats = key ? await app.prefixCache.sources.get(key) : null;
  const target = probe.acceptsRanges
    ? prefixFromStats(
        probe.size,
        morselSize ?? MORSEL_SIZE,
        stats,
        await app.prefixCache.clients.rateOf(client),
      )
    : probe.size;
  let lastError: unknown;
  // Free what is missing, then a quarter more: placement needs room on particular donors.
  for (const slack of [1, 1.25]) {
    try {
      return { plan: await plan(target), cacheBytes: target };
    } catch (e) {
      if (!isNoSpace(e)) throw e;
      lastError = e;
    }
    const { capacityBytes, usedBytes } = await cacheSpace(app);
    const need = Math.ceil(target * slack - Math.max(0, capacityBytes - usedBytes));
    const cuts = await evictBytes(app, Math.max(need, morselSize ?? MORSEL_SIZE), {
      reason: 'import',
      ...forImport,
    });
    if (cuts.length === 0) break;
    await waitForDeletes(app, cuts);
  }
  try {
    return { plan: await plan(target), cacheBytes: target };
  } catch (e) {
    throw isNoSpace(e) ? e : (lastError ?? e);
  }
}

/** Remember that an import caches only `cacheBytes` of the dataset (its prefix). */
export async function markPrefixImport(
  app: FastifyInstance,
  datasetId: string,
  cacheBytes: number,
  sizeBytes: number,
): Promise<void> {
  if (cacheBytes >= sizeBytes) return;
  await app.pg.query('UPDATE datasets SET import_cache_bytes = $2 WHERE id = $1', [
    datasetId,
    cacheBytes,
  ]);
}

/** The bytes an import caches (its prefix, or the whole dataset), for completion checks. */
export async function importCacheBytes(
  app: FastifyInstance,
  dataset: { id: string; sizeBytes: number },
): Promise<number> {
  const { rows } = await app.pg.query<{ n: number | null }>(
    'SELECT import_cache_bytes AS n FROM datasets WHERE id = $1',
    [dataset.id],
  );
  return rows[0]?.n ?? dataset.sizeBytes;
}

/**
 * The manager's probe of a source is the seed's measure of L: the overhead of retrieving
 * nothing (connection, request, answer). Each import adds a sample to the registry.
 */
export async function observeProbe(app: FastifyInstance, uri: string, ms: number): Promise<void> {
  const key = sourceKey(uri);
  if (key) await app.prefixCache.sources.observe(key, { latencyS: ms / 1000 });
}
