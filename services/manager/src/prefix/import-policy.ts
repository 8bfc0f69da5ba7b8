import type { FastifyInstance } from 'fastify';
import { FreeLoaderError, MORSEL_SIZE, type SourceProbe } from '@freeloader/protocol';
import { redactUri } from '@freeloader/sources';
import { waitForDeletes } from './eviction.js';
import { makeRoom, type ExtraFree } from './make-room.js';
import type { EvictionCause } from '../repositories/evictions.js';
import { prefixFromStats } from './prefix-sizing.js';
import { sourceKey } from './source-key.js';

export interface CachePlanned<P> {
  plan: P;
  /** Bytes the import caches: the whole dataset, or its model prefix. */
  cacheBytes: number;
}

const isNoSpace = (e: unknown) => e instanceof FreeLoaderError && e.code === 'NO_SPACE';

/**
 * Places `bytes` of the import, counting `extra` more free bytes on some donors than the ledger
 * shows (space a cut would give back; empty for the real plan). Throws NO_SPACE when it cannot.
 */
export type PlanImport<P> = (bytes: number, extra?: ExtraFree) => Promise<P> | P;

/**
 * The import policy of seed 002 §4.1: a dataset that fits in the free space is cached whole;
 * otherwise only its model prefix (seed §3.1) is, after eviction made room for it. A source
 * without Range support cannot be patched, so such a dataset is always cached whole. `plan`
 * places `bytes` of the dataset (the caller's placement policy); it throws NO_SPACE when the
 * donors cannot hold them.
 *
 * Room is made only for an import that will fit once it is made (see make-room.ts): what to
 * give up is decided by dry runs of `plan` and given up in the same transaction. An import that
 * cannot fit fails with NO_SPACE and no other dataset loses a byte. A dry run plans against
 * the room it would make and cuts nothing.
 *
 * @example const { plan, cacheBytes } = await planCached(app, probe, who, 1 << 20, (n, extra) => place(n, extra));
 */
export async function planCached<P>(
  app: FastifyInstance,
  probe: SourceProbe,
  client: string,
  morselSize: number | undefined,
  plan: PlanImport<P>,
  opts: { dryRun?: boolean; forImport?: Omit<EvictionCause, 'reason'> } = {},
): Promise<CachePlanned<P>> {
  try {
    return { plan: await plan(probe.size), cacheBytes: probe.size };
  } catch (e) {
    if (!isNoSpace(e)) throw e;
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
  // No extension may start (and claim free space) between the decision and the reservation.
  if (!opts.dryRun) await app.prefixCache.extensions.hold();
  const fits = async (bytes: number, extra: ExtraFree) => {
    try {
      await plan(bytes, extra);
      return true;
    } catch (e) {
      if (isNoSpace(e)) return false;
      throw e;
    }
  };
  const room = await makeRoom(app, {
    whole: probe.size,
    target,
    fits,
    dryRun: opts.dryRun,
    cause: { reason: 'import', ...opts.forImport },
  });
  if (opts.dryRun)
    return { plan: await plan(room.cacheBytes, room.extra), cacheBytes: room.cacheBytes };
  for (const datasetId of room.abandoned) {
    app.log.warn({ dataset: datasetId }, 'prefix extension abandoned: an import needs the space');
  }
  if (room.cuts.length > 0) {
    app.log.info(
      {
        uri: redactUri(probe.uri),
        freed: room.cuts.reduce((s, c) => s + c.freedBytes, 0),
        steps: room.cuts.length,
      },
      'cache eviction for an import',
    );
  }
  for (const datasetId of [...room.abandoned, ...room.cuts.map((c) => c.datasetId)]) {
    app.events.publish({ type: 'dataset', datasetId, state: 'ready' });
  }
  await waitForDeletes(app, [...room.abandoned.map((datasetId) => ({ datasetId })), ...room.cuts]);
  return { plan: await plan(room.cacheBytes), cacheBytes: room.cacheBytes };
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
