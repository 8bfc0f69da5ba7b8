import type { FastifyInstance } from 'fastify';
import {
  FreeLoaderError,
  MAX_DATASET_SIZE,
  formatSize,
  signCapability,
  type DatasetView,
  type ImportJobPayload,
  type ImportRequest,
  type SourceProbe,
} from '@freeloader/protocol';
import { openSource, redactUri } from '@freeloader/sources';
import { withTransaction } from '../db/pool.js';
import { enqueueJob } from '../repositories/jobs.js';
import { setPlacement } from '../repositories/placement.js';
import { placementCandidates, withExtraFree } from './candidates.js';
import { defaultDatasetName } from './dataset-name.js';
import type { ImportPlan } from './plan-import.js';
import { planPlacement } from './choose-policy.js';
import { policySummary, recordPolicy } from './dataset-policy.js';
import { markPrefixImport, observeProbe, planCached } from '../prefix/import-policy.js';
import { recordStarter, userIdOf } from '../repositories/import-control.js';

/** How long the manager waits for a source to answer its probe (milliseconds). */
const PROBE_TIMEOUT_MS = 20_000;
/** Slowest import rate a reservation's lifetime allows for (bytes/s) before it lapses. */
const SLOWEST_IMPORT_RATE = 1e6;

export interface ImportStarted {
  dataset: DatasetView | null;
  probe: SourceProbe;
  plan: { width: number; stripeSize: number; morsels: number; donors: number; cacheBytes?: number };
}

/** Ask the source for size, validators and range support; errors are the source's, coded. */
export async function probeSource(app: FastifyInstance, uri: string): Promise<SourceProbe> {
  const source = openSource(uri, { allowFile: app.config.allowFileUris, connections: 1 });
  try {
    const info = await source.probe(AbortSignal.timeout(PROBE_TIMEOUT_MS));
    return {
      uri,
      size: info.size,
      etag: info.etag,
      lastModified: info.lastModified,
      acceptsRanges: info.acceptsRanges,
    };
  } finally {
    await source.close().catch(() => undefined);
  }
}

/**
 * Import a dataset: probe the source, place it greedily over live donors, reserve the space on
 * each, record dataset + placement, and queue one job per importing donor. Donors then pull
 * their own morsels from the source (or, without Range support, one donor streams it all and
 * distributes). Nothing is left behind when a step fails: reservations are released and the
 * dataset row removed.
 */
export async function startImport(
  app: FastifyInstance,
  req: ImportRequest,
  who: string,
): Promise<ImportStarted> {
  const probeStarted = performance.now();
  const probe = await probeSource(app, req.uri);
  await observeProbe(app, req.uri, performance.now() - probeStarted);
  if (probe.size > MAX_DATASET_SIZE) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `${formatSize(probe.size)} exceeds the ${formatSize(MAX_DATASET_SIZE)} limit`,
    );
  }
  const path = req.name ?? defaultDatasetName(req.uri);
  // Whole when it fits, else the model prefix after eviction (seed 002 §4.1).
  const { plan, cacheBytes } = await planCached(
    app,
    probe,
    who,
    req.morselSize,
    async (bytes, extra) =>
      planPlacement(app, bytes, req, withExtraFree(await placementCandidates(app), extra), who),
    { dryRun: req.dryRun, forImport: { forPath: path, forUserId: userIdOf(who) } },
  );
  const summary = {
    width: plan.width,
    stripeSize: plan.unit,
    morsels: plan.morsels,
    donors: plan.bytesPerDonor.size,
    cacheBytes,
    ...policySummary(plan),
  };
  if (req.dryRun) return { dataset: null, probe, plan: summary };

  const dataset = await app.namespaceRepo.createDataset({
    path,
    sourceUri: req.uri,
    sizeBytes: probe.size,
    morselSize: plan.morselSize,
    etag: probe.etag,
    lastModified: probe.lastModified,
    state: plan.morsels === 0 ? 'ready' : 'importing',
  });
  await markPrefixImport(app, dataset.id, cacheBytes, probe.size);
  await recordStarter(app.pg, dataset.id, path, userIdOf(who));
  await recordPolicy(app, dataset, plan.policy);
  if (plan.morsels === 0) return { dataset, probe, plan: summary };
  try {
    await reserveAll(app, dataset.id, plan, probe.size);
    await queueJobs(app, dataset.id, plan, probe, who);
  } catch (e) {
    await withTransaction(app.pg, async (tx) => {
      await app.reservationsRepo.releaseDataset(tx, dataset.id);
      await tx.query('DELETE FROM datasets WHERE id = $1', [dataset.id]);
    }).catch((cleanup: unknown) => app.log.error({ err: cleanup }, 'import cleanup failed'));
    throw e;
  }
  app.log.info({ dataset: dataset.id, uri: redactUri(req.uri), ...summary }, 'import started');
  app.events.publish({ type: 'dataset', datasetId: dataset.id, state: 'importing' });
  return { dataset, probe, plan: summary };
}

/**
 * One reservation per donor. Each is admitted under the donor's row lock, so a racing import
 * that took the space first makes this one fail with NO_SPACE rather than overcommit.
 */
export async function reserveAll(
  app: FastifyInstance,
  datasetId: string,
  plan: Pick<ImportPlan, 'bytesPerDonor'>,
  size: number,
): Promise<void> {
  const ttlSeconds = Math.min(7 * 24 * 3600, Math.ceil(3600 + size / SLOWEST_IMPORT_RATE));
  for (const [agentId, bytes] of plan.bytesPerDonor) {
    await app.reservationsRepo.reserve({ agentId, bytes, datasetId, ttlSeconds });
  }
}

/**
 * What every import job of a plan carries but its mode: the source, the extents, the donors'
 * endpoints and a write capability for them (prefix extensions reuse it).
 *
 * @example (await importPayload(app, id, plan, probe, 'alice'))('ranged')
 */
export async function importPayload(
  app: FastifyInstance,
  datasetId: string,
  plan: Pick<ImportPlan, 'bytesPerDonor' | 'morselSize' | 'extents'>,
  probe: SourceProbe,
  who: string,
): Promise<(mode: ImportJobPayload['mode']) => ImportJobPayload> {
  const donorIds = [...plan.bytesPerDonor.keys()];
  const agents = await app.agentsRepo.getMany(donorIds);
  const donors = agents.map((a) => ({
    id: a.id,
    url: app.softState.heartbeatOf(a.id)?.url ?? a.url,
    state: 'live',
  }));
  const writeCapability = signCapability(app.signingKeys.privateKey, {
    ds: datasetId,
    ops: ['write'],
    sub: who,
    aud: donorIds,
    exp: Math.floor(Date.now() / 1000) + Math.ceil(3600 + probe.size / SLOWEST_IMPORT_RATE),
  });
  return (mode) => ({
    mode,
    source: probe,
    morselSize: plan.morselSize,
    extents: plan.extents,
    donors,
    writeCapability,
  });
}

async function queueJobs(
  app: FastifyInstance,
  datasetId: string,
  plan: ImportPlan,
  probe: SourceProbe,
  who: string,
): Promise<void> {
  const payload = await importPayload(app, datasetId, plan, probe, who);
  await withTransaction(app.pg, async (tx) => {
    await setPlacement(tx, datasetId, plan.extents);
    if (probe.acceptsRanges) {
      for (const [agentId, bytes] of plan.bytesPerDonor) {
        await enqueueJob(tx, {
          kind: 'import',
          datasetId,
          agentId,
          payload: { ...payload('ranged') },
          totalBytes: Math.min(bytes, probe.size),
        });
      }
    } else {
      // No Range support: one donor (the one with most of the data) reads the stream once.
      const [streamer] = [...plan.bytesPerDonor].sort((a, b) => b[1] - a[1])[0]!;
      await enqueueJob(tx, {
        kind: 'import',
        datasetId,
        agentId: streamer,
        payload: { ...payload('stream') },
        totalBytes: probe.size,
      });
    }
  });
}
