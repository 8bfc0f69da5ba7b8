import {
  FreeLoaderError,
  SHA256_BYTES,
  morselCount,
  type JobView,
  type SourceProbe,
} from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { placementCandidates } from '../placement/candidates.js';
import { planCopies, type CopiesPlan } from '../placement/plan-copies.js';
import { importPayload, reserveAll, type PlaceExtentsDeps } from '../placement/place-extents.js';
import { enqueueJobs } from '../repositories/jobs.js';
import { getHashes, getPlacement, setPlacement } from '../repositories/placement.js';
import {
  commitExtensionBytes,
  extensionDataset,
  extensionsInFlight,
  lapsedReservations,
  lockForExtensionCommit,
  lockUnchangedForExtension,
  recordExtension,
  releaseActiveReservations,
  setExtension,
  type ExtensionDatasetRow as DatasetRow,
  type ExtensionRecord,
} from '../repositories/prefix-extensions.js';
import { abandonExtensionIn } from './abandon-extension.js';
import type { ExtensionSettleDeps, PrefixDeps } from './deps.js';
import { cacheSpace, HIGH_WATERMARK } from './eviction.js';
import { decideExtension, type ExtensionDecision } from './extension-decision.js';

/** Extensions in flight at once at most: each pulls from a source and writes to donors. */
export const MAX_CONCURRENT_EXTENSIONS = 2;

/** Whether a finished job belongs to a prefix extension rather than to a first import. */
export function isExtensionJob(job: JobView): boolean {
  return job.kind === 'import' && typeof job.payload.extendsFrom === 'number';
}

/**
 * What starting an extension needs: the database, log, events, and what placement needs to
 * place, reserve and describe the new morsels exactly as a first import does.
 */
export interface ExtensionStartDeps extends PrefixDeps, PlaceExtentsDeps {}

const isNoSpace = (e: unknown) => e instanceof FreeLoaderError && e.code === 'NO_SPACE';

/**
 * Decide whether a dataset just read should have its cached prefix extended (see
 * {@link decideExtension}) and, if so, start the extension: place the new morsels over live
 * donors, reserve their space, and queue one import job per donor. Donors import their own
 * morsels from the source by Range with If-Match, exactly like a first import; the dataset stays
 * `ready` with its old placement and `cached_bytes` until {@link commitExtension}.
 * Callers serialise calls (the free-space check and the reservations must not interleave).
 *
 * @example await considerExtension(deps, datasetId, 'alice') // → { extend: true, fromBytes, toBytes }
 */
export async function considerExtension(
  deps: ExtensionStartDeps,
  datasetId: string,
  who: string,
): Promise<ExtensionDecision> {
  const d = await extensionDataset(deps.pg, datasetId);
  if (!d || d.state !== 'ready') return { extend: false, reason: 'not a ready dataset' };
  const flying = await extensionsInFlight(deps.pg);
  if (flying >= MAX_CONCURRENT_EXTENSIONS) {
    return { extend: false, reason: `${flying} extensions are already running` };
  }
  const decision = decideExtension({
    sizeBytes: d.size_bytes,
    cachedBytes: d.cached_bytes,
    morselSize: d.morsel_size,
    readScore: d.read_score,
    pinned: d.pinned,
    hasSource: d.source_uri !== null,
    busy: d.busy || d.extension !== null,
    ...(await cacheSpace(deps)),
    highWatermark: HIGH_WATERMARK,
  });
  if (!decision.extend) return decision;
  return startExtension(deps, d, decision.fromBytes, decision.toBytes, who);
}

/** Place, reserve and queue an extension of `d` from `fromBytes` to (at most) `toBytes`. */
async function startExtension(
  deps: ExtensionStartDeps,
  d: DatasetRow,
  fromBytes: number,
  wantBytes: number,
  who: string,
): Promise<ExtensionDecision> {
  const fromMorsel = fromBytes / d.morsel_size;
  const candidates = await placementCandidates(deps);
  let toBytes = wantBytes;
  let plan: CopiesPlan | undefined;
  // The room is counted over all donors; particular donors may hold less: halve until it fits.
  while (!plan) {
    try {
      plan = await planCopies(
        deps,
        toBytes - fromBytes,
        { uri: d.source_uri!, morselSize: d.morsel_size },
        candidates,
        who,
        d.replicas,
      );
    } catch (e) {
      if (!isNoSpace(e)) {
        if (e instanceof FreeLoaderError) return { extend: false, reason: e.message };
        throw e;
      }
      const more = Math.floor((toBytes - fromBytes) / d.morsel_size / 2);
      if (more < 1) return { extend: false, reason: 'no donor has room for a morsel' };
      toBytes = fromBytes + more * d.morsel_size;
    }
  }
  const ext: ExtensionRecord = {
    fromBytes,
    toBytes,
    // Placement numbers the new morsels from 0; they start at the old prefix's end.
    extents: plan.extents.map((e) => ({ ...e, first: e.first + fromMorsel })),
    startedAt: new Date().toISOString(),
  };
  const source: SourceProbe = {
    uri: d.source_uri!,
    size: d.size_bytes,
    etag: d.etag,
    lastModified: d.last_modified,
    acceptsRanges: true,
  };
  const release = () => releaseActiveReservations(deps.pg, d.id);
  try {
    await reserveAll(deps, d.id, plan, toBytes - fromBytes);
    const payload = await importPayload(deps, d.id, { ...plan, extents: ext.extents }, source, who);
    const queued = await withTransaction(deps.pg, async (tx) => {
      // Still as decided? A trim, delete or another extension may have come in between.
      if (!(await lockUnchangedForExtension(tx, d.id, fromBytes))) return false;
      await setExtension(tx, d.id, ext);
      await enqueueJobs(
        tx,
        [...plan.bytesPerDonor].map(([agentId, bytes]) => ({
          kind: 'import' as const,
          datasetId: d.id,
          agentId,
          payload: { ...payload('ranged', agentId), extendsFrom: fromMorsel },
          totalBytes: Math.min(bytes, toBytes - fromBytes),
        })),
      );
      return true;
    });
    if (!queued) {
      await release();
      return { extend: false, reason: 'the dataset changed while the extension was planned' };
    }
  } catch (e) {
    await release();
    if (isNoSpace(e)) return { extend: false, reason: 'a donor lost its room meanwhile' };
    throw e;
  }
  deps.log.info(
    { dataset: d.id, from: fromBytes, to: toBytes, donors: plan.bytesPerDonor.size },
    'prefix extension started',
  );
  return { extend: true, fromBytes, toBytes };
}

/**
 * An import job of an extension finished: a failed one abandons the extension (the source
 * changed, a donor ran out of space, …); the last good one commits it.
 */
export async function onExtensionJobFinished(
  deps: ExtensionSettleDeps,
  job: JobView,
): Promise<void> {
  const datasetId = job.datasetId;
  if (!datasetId) return;
  if (job.state === 'failed') {
    await abandonExtension(deps, datasetId, job.error ?? 'an extension job failed');
  } else if (job.state === 'done' && (await deps.jobsRepo.unfinished(datasetId, 'import')) === 0) {
    await commitExtension(deps, datasetId);
  }
}

/**
 * Make an extension readable, in one transaction: its reservations become used space, its
 * extents join the placement, `cached_bytes` grows, and the extension is recorded beside trims
 * and evictions. A reader that fetched the map before keeps reading the old prefix (those
 * morsels did not move) and patches from there. Abandons instead when a morsel's hash never
 * arrived or a reservation lapsed. Returns whether it committed.
 */
export async function commitExtension(
  deps: Pick<ExtensionSettleDeps, 'pg' | 'log' | 'events' | 'reservationsRepo'>,
  datasetId: string,
): Promise<boolean> {
  let why = '';
  const done = await withTransaction(deps.pg, async (tx) => {
    const d = await lockForExtensionCommit(tx, datasetId);
    const ext = d?.extension;
    if (!d || !ext || d.state !== 'ready') return false;
    const to = morselCount(ext.toBytes, d.morsel_size);
    const hashes = await getHashes(tx, datasetId, 0, to);
    let missing = to - Math.floor(hashes.length / SHA256_BYTES);
    for (let at = 0; at < hashes.length; at += SHA256_BYTES) {
      if (hashes.subarray(at, at + SHA256_BYTES).every((b) => b === 0)) missing++;
    }
    const lapsed = await lapsedReservations(tx, datasetId);
    if (missing > 0 || lapsed > 0 || d.cached_bytes !== ext.fromBytes) {
      why =
        missing > 0
          ? `${missing} morsel(s) were never reported stored`
          : lapsed > 0
            ? 'the extension outlived its space reservation'
            : 'the cached prefix changed underneath it';
      await abandonExtensionIn(tx, datasetId);
      return false;
    }
    await deps.reservationsRepo.commitDataset(tx, datasetId);
    await setPlacement(tx, datasetId, [...(await getPlacement(tx, datasetId)), ...ext.extents]);
    await commitExtensionBytes(tx, datasetId, ext.toBytes);
    await recordExtension(tx, datasetId, ext.toBytes - ext.fromBytes);
    return true;
  });
  if (why) deps.log.warn({ dataset: datasetId, reason: why }, 'prefix extension abandoned');
  else if (done) deps.log.info({ dataset: datasetId }, 'prefix extension committed');
  if (done || why) deps.events.publish({ type: 'dataset', datasetId, state: 'ready' });
  return done;
}

/** Abandon a dataset's extension in flight (see {@link abandonExtensionIn}); false if none. */
export async function abandonExtension(
  deps: PrefixDeps,
  datasetId: string,
  reason: string,
): Promise<boolean> {
  const ext = await withTransaction(deps.pg, (tx) => abandonExtensionIn(tx, datasetId));
  if (!ext) return false;
  deps.log.warn({ dataset: datasetId, reason }, 'prefix extension abandoned');
  deps.events.publish({ type: 'dataset', datasetId, state: 'ready' });
  return true;
}
