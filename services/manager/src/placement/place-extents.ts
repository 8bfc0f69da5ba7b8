import type pg from 'pg';
import {
  signCapability,
  type Extent,
  type ImportJobPayload,
  type SourceProbe,
} from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import type { AgentsRepo } from '../repositories/agents.js';
import { enqueueJob } from '../repositories/jobs.js';
import { setPlacement } from '../repositories/placement.js';
import { fanOutOf } from './fan-out.js';
import type { ReservationsRepo } from '../repositories/reservations.js';
import type { SigningKeys } from '../repositories/settings.js';
import type { ImportPlan } from './plan-import.js';
import type { PlacementDeps } from './placement-deps.js';

/** Slowest import rate a reservation's lifetime allows for (bytes/s) before it lapses. */
const SLOWEST_IMPORT_RATE = 1e6;

/** What turning a plan into reservations and import jobs touches. */
export interface PlaceExtentsDeps extends PlacementDeps {
  reservationsRepo: Pick<ReservationsRepo, 'reserve'>;
  agentsRepo: Pick<AgentsRepo, 'getMany'>;
  signingKeys: Pick<SigningKeys, 'privateKey'>;
}

/**
 * How long an import's reservations live (seconds): an hour plus the dataset at the slowest
 * import rate, at most a week.
 *
 * @example reservationTtlSeconds(1e9) // → 4600
 */
export function reservationTtlSeconds(size: number): number {
  return Math.min(7 * 24 * 3600, Math.ceil(3600 + size / SLOWEST_IMPORT_RATE));
}

/**
 * One reservation per donor. Each is admitted under the donor's row lock, so a racing import
 * that took the space first makes this one fail with NO_SPACE rather than overcommit.
 */
export async function reserveAll(
  deps: Pick<PlaceExtentsDeps, 'reservationsRepo'>,
  datasetId: string,
  plan: Pick<ImportPlan, 'bytesPerDonor'>,
  size: number,
): Promise<void> {
  const ttlSeconds = reservationTtlSeconds(size);
  for (const [agentId, bytes] of plan.bytesPerDonor) {
    await deps.reservationsRepo.reserve({ agentId, bytes, datasetId, ttlSeconds });
  }
}

/**
 * What every import job of a plan carries but its mode: the source, the extents, the donors'
 * endpoints and a write capability for them (prefix extensions reuse it). With `fanOutFrom`,
 * the dataset's whole placement, donors of copies ≥ 1 copy from copy 0's donors (issue 15).
 *
 * @example (await importPayload(app, id, plan, probe, 'alice', plan.extents))('ranged')
 */
export async function importPayload(
  deps: Pick<PlaceExtentsDeps, 'agentsRepo' | 'softState' | 'signingKeys'>,
  datasetId: string,
  plan: Pick<ImportPlan, 'bytesPerDonor' | 'morselSize' | 'extents'>,
  probe: SourceProbe,
  who: string,
  fanOutFrom?: readonly Extent[],
): Promise<(mode: ImportJobPayload['mode']) => ImportJobPayload> {
  const donorIds = [...plan.bytesPerDonor.keys()];
  const agents = await deps.agentsRepo.getMany(donorIds);
  const donors = agents.map((a) => ({
    id: a.id,
    url: deps.softState.heartbeatOf(a.id)?.url ?? a.url,
    state: 'live',
  }));
  const ttlSeconds = Math.ceil(3600 + probe.size / SLOWEST_IMPORT_RATE);
  const writeCapability = signCapability(deps.signingKeys.privateKey, {
    ds: datasetId,
    ops: ['write'],
    sub: who,
    aud: donorIds,
    exp: Math.floor(Date.now() / 1000) + ttlSeconds,
  });
  const fanOut = fanOutFrom && (await fanOutOf(deps, datasetId, fanOutFrom, who, ttlSeconds));
  return (mode) => ({
    mode,
    source: probe,
    morselSize: plan.morselSize,
    extents: plan.extents,
    donors,
    writeCapability,
    // A streamed import already reads the source once and sends every copy itself.
    ...(fanOut && mode === 'ranged' ? { fanOut } : {}),
  });
}

/**
 * Put a planned dataset on its donors: reserve the space on each, then record the placement
 * and queue the import jobs in one transaction (one per donor with Range support, else one
 * streaming donor). Throws NO_SPACE when a donor lost its room meanwhile; the caller cleans up.
 */
export async function placeExtents(
  deps: PlaceExtentsDeps,
  datasetId: string,
  plan: ImportPlan,
  probe: SourceProbe,
  who: string,
): Promise<void> {
  await reserveAll(deps, datasetId, plan, probe.size);
  await queueImportJobs(deps, datasetId, plan, probe, who);
}

async function queueImportJobs(
  deps: PlaceExtentsDeps & { pg: pg.Pool },
  datasetId: string,
  plan: ImportPlan,
  probe: SourceProbe,
  who: string,
): Promise<void> {
  const payload = await importPayload(deps, datasetId, plan, probe, who, plan.extents);
  await withTransaction(deps.pg, async (tx) => {
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
