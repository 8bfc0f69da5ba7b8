import type { FastifyInstance } from 'fastify';
import {
  FreeLoaderError,
  SHA256_BYTES,
  morselCount,
  type JobView,
  type SourceProbe,
} from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { placementCandidates } from '../placement/candidates.js';
import { planPlacement, type PolicyPlan } from '../placement/choose-policy.js';
import { importPayload, reserveAll } from '../placement/place-extents.js';
import { enqueueJob } from '../repositories/jobs.js';
import { getHashes, getPlacement, setPlacement } from '../repositories/placement.js';
import { abandonExtensionIn, type ExtensionRecord } from './abandon-extension.js';
import { cacheSpace, HIGH_WATERMARK } from './eviction.js';
import { decideExtension, type ExtensionDecision } from './extension-decision.js';

/** Extensions in flight at once at most: each pulls from a source and writes to donors. */
export const MAX_CONCURRENT_EXTENSIONS = 2;

/** Whether a finished job belongs to a prefix extension rather than to a first import. */
export function isExtensionJob(job: Pick<JobView, 'kind' | 'payload'>): boolean {
  return job.kind === 'import' && typeof job.payload.extendsFrom === 'number';
}

interface DatasetRow {
  id: string;
  state: string;
  source_uri: string | null;
  size_bytes: number;
  morsel_size: number;
  cached_bytes: number;
  etag: string | null;
  last_modified: string | null;
  pinned: boolean;
  read_score: number;
  extension: ExtensionRecord | null;
  busy: boolean;
}

const isNoSpace = (e: unknown) => e instanceof FreeLoaderError && e.code === 'NO_SPACE';

/**
 * Decide whether a dataset just read should have its cached prefix extended (see
 * {@link decideExtension}) and, if so, start the extension: place the new morsels over live
 * donors, reserve their space, and queue one import job per donor. Donors import their own
 * morsels from the source by Range with If-Match, exactly like a first import; the dataset stays
 * `ready` with its old placement and `cached_bytes` until {@link commitExtension}.
 * Callers serialise calls (the free-space check and the reservations must not interleave).
 *
 * @example await considerExtension(app, datasetId, 'alice') // → { extend: true, fromBytes, toBytes }
 */
export async function considerExtension(
  app: FastifyInstance,
  datasetId: string,
  who: string,
): Promise<ExtensionDecision> {
  const { rows } = await app.pg.query<DatasetRow>(
    `SELECT d.id, d.state, d.source_uri, d.size_bytes, d.morsel_size, d.cached_bytes, d.etag,
            d.last_modified, d.pinned, d.read_score, d.extension,
            EXISTS (SELECT 1 FROM jobs j WHERE j.dataset_id = d.id
                    AND j.state IN ('queued', 'running')) AS busy
     FROM datasets d WHERE d.id = $1`,
    [datasetId],
  );
  const d = rows[0];
  if (!d || d.state !== 'ready') return { extend: false, reason: 'not a ready dataset' };
  const { rows: flying } = await app.pg.query<{ n: number }>(
    'SELECT count(*)::int AS n FROM datasets WHERE extension IS NOT NULL',
  );
  if (flying[0]!.n >= MAX_CONCURRENT_EXTENSIONS) {
    return { extend: false, reason: `${flying[0]!.n} extensions are already running` };
  }
  const decision = decideExtension({
    sizeBytes: d.size_bytes,
    cachedBytes: d.cached_bytes,
    morselSize: d.morsel_size,
    readScore: d.read_score,
    pinned: d.pinned,
    hasSource: d.source_uri !== null,
    busy: d.busy || d.extension !== null,
    ...(await cacheSpace(app)),
    highWatermark: HIGH_WATERMARK,
  });
  if (!decision.extend) return decision;
  return startExtension(app, d, decision.fromBytes, decision.toBytes, who);
}

/** Place, reserve and queue an extension of `d` from `fromBytes` to (at most) `toBytes`. */
async function startExtension(
  app: FastifyInstance,
  d: DatasetRow,
  fromBytes: number,
  wantBytes: number,
  who: string,
): Promise<ExtensionDecision> {
  const fromMorsel = fromBytes / d.morsel_size;
  const candidates = await placementCandidates(app);
  let toBytes = wantBytes;
  let plan: PolicyPlan | undefined;
  // The room is counted over all donors; particular donors may hold less: halve until it fits.
  while (!plan) {
    try {
      plan = await planPlacement(
        app,
        toBytes - fromBytes,
        { uri: d.source_uri!, morselSize: d.morsel_size },
        candidates,
        who,
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
  const release = () =>
    app.pg.query(
      `UPDATE reservations SET state = 'released', updated_at = now()
       WHERE dataset_id = $1 AND state = 'active'`,
      [d.id],
    );
  try {
    await reserveAll(app, d.id, plan, toBytes - fromBytes);
    const payload = (
      await importPayload(app, d.id, { ...plan, extents: ext.extents }, source, who)
    )('ranged');
    const queued = await withTransaction(app.pg, async (tx) => {
      // Still as decided? A trim, delete or another extension may have come in between.
      const { rows } = await tx.query<{ ok: boolean }>(
        `SELECT state = 'ready' AND cached_bytes = $2 AND extension IS NULL AS ok
         FROM datasets WHERE id = $1 FOR UPDATE`,
        [d.id, fromBytes],
      );
      if (!rows[0]?.ok) return false;
      await tx.query('UPDATE datasets SET extension = $2 WHERE id = $1', [
        d.id,
        JSON.stringify(ext),
      ]);
      for (const [agentId, bytes] of plan.bytesPerDonor) {
        await enqueueJob(tx, {
          kind: 'import',
          datasetId: d.id,
          agentId,
          payload: { ...payload, extendsFrom: fromMorsel },
          totalBytes: Math.min(bytes, toBytes - fromBytes),
        });
      }
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
  app.log.info(
    { dataset: d.id, from: fromBytes, to: toBytes, donors: plan.bytesPerDonor.size },
    'prefix extension started',
  );
  return { extend: true, fromBytes, toBytes };
}

/**
 * An import job of an extension finished: a failed one abandons the extension (the source
 * changed, a donor ran out of space, …); the last good one commits it.
 */
export async function onExtensionJobFinished(app: FastifyInstance, job: JobView): Promise<void> {
  const datasetId = job.datasetId;
  if (!datasetId) return;
  if (job.state === 'failed') {
    await abandonExtension(app, datasetId, job.error ?? 'an extension job failed');
  } else if (job.state === 'done' && (await app.jobsRepo.unfinished(datasetId, 'import')) === 0) {
    await commitExtension(app, datasetId);
  }
}

/**
 * Make an extension readable, in one transaction: its reservations become used space, its
 * extents join the placement, `cached_bytes` grows, and the extension is recorded beside trims
 * and evictions. A reader that fetched the map before keeps reading the old prefix (those
 * morsels did not move) and patches from there. Abandons instead when a morsel's hash never
 * arrived or a reservation lapsed. Returns whether it committed.
 */
export async function commitExtension(app: FastifyInstance, datasetId: string): Promise<boolean> {
  let why = '';
  const done = await withTransaction(app.pg, async (tx) => {
    const { rows } = await tx.query<{
      state: string;
      size_bytes: number;
      morsel_size: number;
      cached_bytes: number;
      extension: ExtensionRecord | null;
    }>(
      `SELECT state, size_bytes, morsel_size, cached_bytes, extension FROM datasets
       WHERE id = $1 FOR UPDATE`,
      [datasetId],
    );
    const d = rows[0];
    const ext = d?.extension;
    if (!d || !ext || d.state !== 'ready') return false;
    const to = morselCount(ext.toBytes, d.morsel_size);
    const hashes = await getHashes(tx, datasetId, 0, to);
    let missing = to - Math.floor(hashes.length / SHA256_BYTES);
    for (let at = 0; at < hashes.length; at += SHA256_BYTES) {
      if (hashes.subarray(at, at + SHA256_BYTES).every((b) => b === 0)) missing++;
    }
    const { rows: lapsed } = await tx.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM reservations
       WHERE dataset_id = $1 AND state = 'active' AND expires_at <= now()`,
      [datasetId],
    );
    if (missing > 0 || lapsed[0]!.n > 0 || d.cached_bytes !== ext.fromBytes) {
      why =
        missing > 0
          ? `${missing} morsel(s) were never reported stored`
          : lapsed[0]!.n > 0
            ? 'the extension outlived its space reservation'
            : 'the cached prefix changed underneath it';
      await abandonExtensionIn(tx, datasetId);
      return false;
    }
    await app.reservationsRepo.commitDataset(tx, datasetId);
    await setPlacement(tx, datasetId, [...(await getPlacement(tx, datasetId)), ...ext.extents]);
    await tx.query(
      `UPDATE datasets SET cached_bytes = $2, extension = NULL,
         import_cache_bytes = CASE WHEN $2 >= size_bytes THEN NULL ELSE $2 END
       WHERE id = $1`,
      [datasetId, ext.toBytes],
    );
    await tx.query(
      `INSERT INTO cache_evictions (dataset_id, kind, bytes) VALUES ($1, 'extend', $2)`,
      [datasetId, ext.toBytes - ext.fromBytes],
    );
    return true;
  });
  if (why) app.log.warn({ dataset: datasetId, reason: why }, 'prefix extension abandoned');
  else if (done) app.log.info({ dataset: datasetId }, 'prefix extension committed');
  if (done || why) app.events.publish({ type: 'dataset', datasetId, state: 'ready' });
  return done;
}

/** Abandon a dataset's extension in flight (see {@link abandonExtensionIn}); false if none. */
export async function abandonExtension(
  app: FastifyInstance,
  datasetId: string,
  reason: string,
): Promise<boolean> {
  const ext = await withTransaction(app.pg, (tx) => abandonExtensionIn(tx, datasetId));
  if (!ext) return false;
  app.log.warn({ dataset: datasetId, reason }, 'prefix extension abandoned');
  app.events.publish({ type: 'dataset', datasetId, state: 'ready' });
  return true;
}
