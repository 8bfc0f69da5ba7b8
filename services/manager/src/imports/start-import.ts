import {
  FreeLoaderError,
  MAX_DATASET_SIZE,
  formatSize,
  type DatasetView,
  type ImportRequest,
  type ImportResponse,
  type SourceProbe,
} from '@freeloader/protocol';
import { redactUri } from '@freeloader/sources';
import { withTransaction } from '../db/pool.js';
import { placementCandidates, withExtraFree } from '../placement/candidates.js';
import { markPrefixImport, observeProbe, planCached } from '../placement/import-policy.js';
import { placeExtents } from '../placement/place-extents.js';
import { planCopies } from '../placement/plan-copies.js';
import { probeSource } from '../placement/probe-source.js';
import { replicaCount } from '../placement/replica-count.js';
import { deleteDatasetRow, setReplication } from '../repositories/datasets.js';
import { donorLifetimes } from '../repositories/donor-lifetimes.js';
import { recordStarter, userIdOf } from '../repositories/import-control.js';
import { defaultDatasetName } from './dataset-name.js';
import { policySummary, recordPolicy } from './dataset-policy.js';
import type { ImportDeps } from './import-deps.js';

export interface ImportStarted {
  dataset: DatasetView | null;
  probe: SourceProbe;
  plan: ImportResponse['plan'];
}

/**
 * Import a dataset: choose its copy count n, probe the source, place n copies over live donors
 * (no two copies of a morsel on one donor), reserve the space on each, record dataset +
 * placement, and queue one job per importing donor. Donors then pull their own morsels (of every
 * copy they hold) from the source (or, without Range support, one donor streams it all and
 * distributes). Nothing is left behind when a step fails: reservations are released and the
 * dataset row removed. `newFrom`: see NewDataset (the route's requireCreatable).
 */
export async function startImport(
  deps: ImportDeps,
  req: ImportRequest,
  who: string,
  newFrom?: number,
): Promise<ImportStarted> {
  const wanted = replicaCount(req, deps.config.replicasDefault, await donorLifetimes(deps.pg));
  const probeStarted = performance.now();
  const probe = await probeSource(deps, req.uri);
  await observeProbe(deps, req.uri, performance.now() - probeStarted);
  if (probe.size > MAX_DATASET_SIZE) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `${formatSize(probe.size)} exceeds the ${formatSize(MAX_DATASET_SIZE)} limit`,
    );
  }
  const path = req.name ?? defaultDatasetName(req.uri);
  // Whole when it fits, else the model prefix after eviction (seed 002 §4.1).
  const { plan, cacheBytes } = await planCached(
    deps,
    probe,
    who,
    req.morselSize,
    async (bytes, extra) =>
      planCopies(
        deps,
        bytes,
        req,
        withExtraFree(await placementCandidates(deps), extra),
        who,
        wanted.replicas,
      ),
    { dryRun: req.dryRun, forImport: { forPath: path, forUserId: userIdOf(who) } },
  );
  const summary = {
    width: plan.width,
    stripeSize: plan.unit,
    morsels: plan.morsels,
    donors: plan.bytesPerDonor.size,
    cacheBytes,
    ...policySummary(plan),
    replicas: wanted.replicas,
    replicasReason: wanted.reason,
    placedCopies: plan.copies,
  };
  if (req.dryRun) return { dataset: null, probe, plan: summary };

  const dataset = await deps.namespaceRepo.createDataset({
    path,
    sourceUri: req.uri,
    sizeBytes: probe.size,
    morselSize: plan.morselSize,
    etag: probe.etag,
    lastModified: probe.lastModified,
    state: plan.morsels === 0 ? 'ready' : 'importing',
    // The importing user owns it (and any folder the import creates).
    ownerId: userIdOf(who),
    // Folders from this depth on must be new: the route checked the caller may create there.
    ...(newFrom !== undefined ? { newFrom } : {}),
  });
  await markPrefixImport(deps, dataset.id, cacheBytes, probe.size);
  // Donors store ciphertext only, unless the importer says the data is public — a dataset cached
  // as a prefix too. Skipping those made an import silently clear whenever placement found no
  // room for all of it (on a busy machine, donors whose heartbeat went stale drop out of the
  // candidates), with no tags and plaintext hashes — the one path found that matches the
  // dead-donor test's "survivor storing unsealed morsels" (not reproduced since). Its suffix is patched and checked by the reader, which has the key
  // (suffix-check.ts); extensions seal like any import.
  if (req.encrypt !== false) await deps.dataKeys.create(dataset.id);
  await recordStarter(deps.pg, dataset.id, path, userIdOf(who));
  await recordPolicy(deps, dataset, plan.policy);
  await setReplication(deps.pg, dataset.id, wanted.replicas, wanted.availabilityTarget);
  dataset.replicas = wanted.replicas;
  dataset.availabilityTarget = wanted.availabilityTarget;
  if (plan.morsels === 0) return { dataset, probe, plan: summary };
  try {
    await placeExtents(deps, dataset.id, plan, probe, who);
  } catch (e) {
    await withTransaction(deps.pg, async (tx) => {
      await deps.reservationsRepo.releaseDataset(tx, dataset.id);
      await deleteDatasetRow(tx, dataset.id);
    }).catch((cleanup: unknown) => deps.log.error({ err: cleanup }, 'import cleanup failed'));
    throw e;
  }
  deps.log.info({ dataset: dataset.id, uri: redactUri(req.uri), ...summary }, 'import started');
  deps.events.publish({ type: 'dataset', datasetId: dataset.id, state: 'importing' });
  return { dataset, probe, plan: summary };
}
