import type pg from 'pg';
import type { FastifyBaseLogger } from 'fastify';
import { FreeLoaderError, type SourceProbe } from '@freeloader/protocol';
import { redactUri } from '@freeloader/sources';
import type { EventBus } from '../events.js';
import type { EvictionCause } from '../repositories/evictions.js';
import { importCacheBytesOf, setImportCacheBytes } from '../repositories/import-cache-bytes.js';

/** Extra free bytes per donor that a plan may count on (space a cut would give back). */
export type ExtraFree = ReadonlyMap<string, number>;

/** Room prefix caching made (or, in a dry run, would make) for an import. */
export interface RoomMade {
  cacheBytes: number;
  /** The space the cuts give back per donor (what a dry run plans with). */
  extra: ExtraFree;
  /** Datasets whose extension in flight was abandoned. */
  abandoned: string[];
  cuts: ReadonlyArray<{ datasetId: string; freedBytes: number }>;
}

/** What an import that does not fit asks of prefix caching (seed 002 §4.1). */
export interface RoomRequest {
  whole: number;
  target: number;
  fits: (bytes: number, extra: ExtraFree) => Promise<boolean>;
  dryRun?: boolean;
  cause?: EvictionCause;
}

/**
 * The part of prefix caching the import policy uses: the model prefix, holding extensions off,
 * eviction, and the source registry. Prefix caching implements it (`prefix/cache-room.ts`), so
 * placement stays below it and calls it only through this interface.
 */
export interface CacheRoom {
  /** Bytes to cache of a dataset that does not fit: the model prefix (seed §3.1), or all of it. */
  prefixTarget(probe: SourceProbe, client: string, morselSize: number | undefined): Promise<number>;
  /** Let no prefix extension start (and claim free space) until the caller's transaction ends. */
  holdExtensions(): Promise<void>;
  makeRoom(input: RoomRequest): Promise<RoomMade>;
  /** Wait (bounded) until the delete jobs of these cuts ran, so donors really have room. */
  waitForDeletes(cuts: ReadonlyArray<{ datasetId: string }>): Promise<void>;
  /** One more sample of a source's latency (the manager's probe of it). */
  observeProbe(uri: string, ms: number): Promise<void>;
}

declare module 'fastify' {
  interface FastifyInstance {
    cacheRoom: CacheRoom;
  }
}

/** What the import policy uses; the app satisfies it. */
export interface ImportPolicyDeps {
  cacheRoom: CacheRoom;
  log: Pick<FastifyBaseLogger, 'info' | 'warn'>;
  events: Pick<EventBus, 'publish'>;
}

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
 * Room is made only for an import that will fit once it is made (`CacheRoom.makeRoom`, in
 * prefix/make-room.ts): what to give up is decided by dry runs of `plan` and given up in the
 * same transaction. An import that cannot fit fails with NO_SPACE and no other dataset loses a
 * byte. A dry run plans against the room it would make and cuts nothing.
 *
 * @example const { plan, cacheBytes } = await planCached(app, probe, who, 1 << 20, (n, extra) => place(n, extra));
 */
export async function planCached<P>(
  deps: ImportPolicyDeps,
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
  const target = await deps.cacheRoom.prefixTarget(probe, client, morselSize);
  // No extension may start (and claim free space) between the decision and the reservation.
  if (!opts.dryRun) await deps.cacheRoom.holdExtensions();
  const fits = async (bytes: number, extra: ExtraFree) => {
    try {
      await plan(bytes, extra);
      return true;
    } catch (e) {
      if (isNoSpace(e)) return false;
      throw e;
    }
  };
  const room = await deps.cacheRoom.makeRoom({
    whole: probe.size,
    target,
    fits,
    dryRun: opts.dryRun,
    cause: { reason: 'import', ...opts.forImport },
  });
  if (opts.dryRun)
    return { plan: await plan(room.cacheBytes, room.extra), cacheBytes: room.cacheBytes };
  for (const datasetId of room.abandoned) {
    deps.log.warn({ dataset: datasetId }, 'prefix extension abandoned: an import needs the space');
  }
  if (room.cuts.length > 0) {
    deps.log.info(
      {
        uri: redactUri(probe.uri),
        freed: room.cuts.reduce((s, c) => s + c.freedBytes, 0),
        steps: room.cuts.length,
      },
      'cache eviction for an import',
    );
  }
  for (const datasetId of [...room.abandoned, ...room.cuts.map((c) => c.datasetId)]) {
    deps.events.publish({ type: 'dataset', datasetId, state: 'ready' });
  }
  await deps.cacheRoom.waitForDeletes([
    ...room.abandoned.map((datasetId) => ({ datasetId })),
    ...room.cuts,
  ]);
  return { plan: await plan(room.cacheBytes), cacheBytes: room.cacheBytes };
}

/** Remember that an import caches only `cacheBytes` of the dataset (its prefix). */
export async function markPrefixImport(
  deps: { pg: pg.Pool },
  datasetId: string,
  cacheBytes: number,
  sizeBytes: number,
): Promise<void> {
  if (cacheBytes >= sizeBytes) return;
  await setImportCacheBytes(deps.pg, datasetId, cacheBytes);
}

/** The bytes an import caches (its prefix, or the whole dataset), for completion checks. */
export async function importCacheBytes(
  deps: { pg: pg.Pool },
  dataset: { id: string; sizeBytes: number },
): Promise<number> {
  return (await importCacheBytesOf(deps.pg, dataset.id)) ?? dataset.sizeBytes;
}

/**
 * The manager's probe of a source is the seed's measure of L: the overhead of retrieving
 * nothing (connection, request, answer). Each import adds a sample to the registry.
 */
export async function observeProbe(
  deps: Pick<ImportPolicyDeps, 'cacheRoom'>,
  uri: string,
  ms: number,
): Promise<void> {
  await deps.cacheRoom.observeProbe(uri, ms);
}
