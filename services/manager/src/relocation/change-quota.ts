import {
  CAPABILITY_CLOCK_SKEW_S,
  CAPABILITY_TTL_S,
  FreeLoaderError,
  signCapability,
  type QuotaChangeResponse,
  type RelocateJobPayload,
} from '@freeloader/protocol';
import { deleteDataset } from '../dataset-lifecycle.js';
import { placementCandidates } from '../placement/candidates.js';
import { probeSource } from '../placement/probe-source.js';
import { enqueueJob } from '../repositories/jobs.js';
import { getPlacement } from '../repositories/placement.js';
import {
  committedBytesOn,
  relocatableDatasets,
  setQuotaMeasuringExcess,
} from '../repositories/relocations.js';
import {
  planRelocation,
  type DatasetMove,
  type HeldDataset,
} from '../placement/plan-relocation.js';
import type { RelocationDeps } from './relocation-deps.js';

/**
 * Moved morsels stay on the old donor this long after the commit, for readers with old maps: a
 * map's read capability is accepted for CAPABILITY_TTL_S plus the clock skew allowance. (The
 * donor frees them sooner when it needs the space.)
 */
export const RELOCATION_GRACE_MS = (CAPABILITY_TTL_S + CAPABILITY_CLOCK_SKEW_S) * 1000;
/** Lifetime of a relocation's target reservations and write capability (seconds). */
const RELOCATION_TTL_S = 6 * 3600;

/** What the commit needs, carried in the job payload next to what the agent needs. */
export interface RelocateCommitInfo {
  from: string;
  chunks: Array<{ copy: number; first: number; count: number; to: string }>;
  reservations: Record<string, string>;
  bytesPerTarget: Record<string, number>;
}

/**
 * An agent set its quota to `quotaBytes`. The new quota holds at once (nothing new is placed
 * beyond it); whatever the ledger says the agent holds beyond it — minus relocations already
 * under way — is moved to other live donors (relocate jobs for this agent, target space
 * reserved now), or, where nobody has room, datasets whose source still answers are evicted.
 */
export async function changeAgentQuota(
  deps: RelocationDeps,
  agentId: string,
  quotaBytes: number,
  quotaVersion?: number,
): Promise<QuotaChangeResponse> {
  const row = await setQuotaMeasuringExcess(deps.pg, agentId, quotaBytes, quotaVersion);
  if (row?.excess === null || row === undefined) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'a bandwidth-only agent has no quota');
  }
  // The call is a sighting with the new quota: a flush of the previous heartbeat must not put
  // the old quota back (placement would see space that is gone), nor may a heartbeat the agent
  // built before the change and that arrives after it (the version keeps it out).
  const hb = deps.softState.heartbeatOf(agentId);
  if (hb) {
    deps.softState.record(agentId, {
      ...hb,
      quotaBytes,
      ...(quotaVersion === undefined ? {} : { quotaVersion }),
    });
  }
  const excessBytes = Math.max(0, Number(row.excess));
  const result: QuotaChangeResponse = {
    quotaBytes,
    excessBytes,
    relocating: [],
    evicting: [],
    unplacedBytes: 0,
  };
  if (excessBytes === 0) return result;

  const held = await heldDatasets(deps, agentId);
  const targets = (await placementCandidates(deps)).filter((c) => c.id !== agentId);
  const plan = planRelocation(agentId, excessBytes, held, targets);
  let remaining = plan.remainingBytes;
  for (const move of plan.moves) {
    const queued = await queueMove(deps, agentId, move, targets);
    if (queued) result.relocating.push(queued);
    else remaining += [...move.bytesPerTarget.values()].reduce((a, b) => a + b, 0);
  }
  for (const d of plan.unmoved) {
    if (remaining <= 0) break;
    const bytes = await evictIfSourceAnswers(deps, agentId, d);
    if (bytes > 0) {
      result.evicting.push({ datasetId: d.id, bytes });
      remaining -= bytes;
    }
  }
  result.unplacedBytes = Math.max(0, remaining);
  deps.log.info({ agentId, ...result, relocating: result.relocating.length }, 'quota lowered');
  return result;
}

/** Ready datasets with morsels on `agentId` and no relocation of theirs under way. */
async function heldDatasets(deps: RelocationDeps, agentId: string): Promise<HeldDataset[]> {
  const rows = await relocatableDatasets(deps.pg, agentId);
  return Promise.all(
    rows.map(async (r) => ({
      id: r.id,
      morselSize: r.morsel_size,
      sourceUri: r.source_uri,
      extents: await getPlacement(deps.pg, r.id),
    })),
  );
}

/**
 * Reserve the space on each target and queue the relocate job. A target that lost its space
 * to a racing import drops out with its chunks (they stay where they are). Returns undefined
 * when nothing could be reserved.
 */
async function queueMove(
  deps: RelocationDeps,
  from: string,
  move: DatasetMove,
  targets: Array<{ id: string; url: string }>,
): Promise<QuotaChangeResponse['relocating'][number] | undefined> {
  const reservations: Record<string, string> = {};
  for (const [to, bytes] of move.bytesPerTarget) {
    try {
      const r = await deps.reservationsRepo.reserve({
        agentId: to,
        bytes,
        datasetId: move.datasetId,
        ttlSeconds: RELOCATION_TTL_S,
      });
      reservations[to] = r.id;
    } catch (e) {
      if (!(e instanceof FreeLoaderError && e.code === 'NO_SPACE')) throw e;
    }
  }
  const chunks = move.chunks.filter((c) => reservations[c.to] !== undefined);
  if (chunks.length === 0) return undefined;
  const urls = new Map(targets.map((t) => [t.id, t.url]));
  const byTarget = new Map<string, number[]>();
  for (const c of chunks) byTarget.set(c.to, [...(byTarget.get(c.to) ?? []), ...c.morsels]);
  const bytesPerTarget = Object.fromEntries(
    [...move.bytesPerTarget].filter(([to]) => reservations[to] !== undefined),
  );
  const bytes = Object.values(bytesPerTarget).reduce((a, b) => a + b, 0);
  const payload: RelocateJobPayload & RelocateCommitInfo = {
    datasetId: move.datasetId,
    morselSize: move.morselSize,
    moves: [...byTarget].map(([to, morsels]) => ({ to, url: urls.get(to)!, morsels })),
    writeCapability: signCapability(deps.signingKeys.privateKey, {
      ds: move.datasetId,
      ops: ['write'],
      sub: `relocation:${from}`,
      aud: [...byTarget.keys()],
      exp: Math.floor(Date.now() / 1000) + RELOCATION_TTL_S,
    }),
    graceMs: RELOCATION_GRACE_MS,
    from,
    chunks: chunks.map(({ copy, first, count, to }) => ({ copy, first, count, to })),
    reservations,
    bytesPerTarget,
  };
  const job = await enqueueJob(deps.pg, {
    kind: 'relocate',
    datasetId: move.datasetId,
    agentId: from,
    payload,
    totalBytes: bytes,
  });
  return { datasetId: move.datasetId, jobId: job.id, bytes, targets: byTarget.size };
}

/**
 * Evict a dataset from the cache when its source still answers (so nothing is lost: it can be
 * imported again); returns the bytes this agent sheds, 0 when it kept the dataset.
 */
async function evictIfSourceAnswers(
  deps: RelocationDeps,
  agentId: string,
  d: HeldDataset,
): Promise<number> {
  if (!d.sourceUri) return 0;
  try {
    await probeSource(deps, d.sourceUri);
  } catch {
    return 0;
  }
  const bytes = await committedBytesOn(deps.pg, agentId, d.id);
  await deleteDataset(deps, d.id);
  return bytes;
}
