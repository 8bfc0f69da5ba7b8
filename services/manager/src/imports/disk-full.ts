import {
  donorsOfMorsel,
  formatSize,
  morselLength,
  type DatasetView,
  type Extent,
  type ImportJobPayload,
  type JobView,
} from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { placementCandidates, type Candidate } from '../placement/candidates.js';
import {
  chunksOf,
  reassign,
  unitChunksOf,
  type Chunk,
  type Reassignment,
} from '../placement/move-extents.js';
import { importPayload, reservationTtlSeconds } from '../placement/place-extents.js';
import { enqueueJob } from '../repositories/jobs.js';
import { getPlacement, setPlacement } from '../repositories/placement.js';
import { lockDatasetState } from '../repositories/datasets.js';
import type { ReservationsRepo } from '../repositories/reservations.js';
import type { ImportDeps } from './import-deps.js';

/** What moving a full donor's share touches. */
export type DiskFullDeps = Pick<
  ImportDeps,
  'pg' | 'softState' | 'agentsRepo' | 'signingKeys' | 'log'
> & { reservationsRepo: Pick<ReservationsRepo, 'reserve' | 'release' | 'releaseDataset'> };

/** Where each chunk of the full donor's share goes, or why it cannot go anywhere. */
export type ChunkTargets =
  | { ok: true; moves: (Reassignment & { morsels: number[] })[]; bytes: Map<string, number> }
  | { ok: false; reason: string };

/**
 * Give each chunk of a full donor's share to the candidate with the most free space left (the
 * ThriftStore seed's most-free-space scheme), counting each chunk's real bytes, never to a donor
 * that `holdersOf` says holds another copy of one of the chunk's morsels (copies of a morsel never
 * share a donor); fails when some chunk fits nowhere.
 *
 * @example
 *   targetChunks([{ copy: 0, first: 0, count: 2, morsels: [0] }], [{ id: 'b', url: '', freeBytes: 9 }], (m) => 4)
 *   // → { ok: true, moves: [{ copy: 0, first: 0, count: 2, to: 'b', morsels: [0] }], bytes: b → 4 }
 */
export function targetChunks(
  chunks: readonly Chunk[],
  candidates: readonly Candidate[],
  lengthOf: (morsel: number) => number,
  holdersOf: (chunk: Chunk) => ReadonlySet<string> = () => new Set(),
): ChunkTargets {
  const free = new Map(candidates.map((c) => [c.id, c.freeBytes]));
  const bytes = new Map<string, number>();
  const moves: (Reassignment & { morsels: number[] })[] = [];
  for (const chunk of chunks) {
    const need = chunk.morsels.reduce((n, m) => n + lengthOf(m), 0);
    const holders = holdersOf(chunk);
    const best = [...free].filter(([id]) => !holders.has(id)).sort((a, b) => b[1] - a[1])[0];
    if (!best || best[1] < need) {
      const most = best ? formatSize(best[1]) : 'none';
      return {
        ok: false,
        reason: `no other donor has room for ${formatSize(need)} (most free: ${most})`,
      };
    }
    const [to, left] = best;
    free.set(to, left - need);
    bytes.set(to, (bytes.get(to) ?? 0) + need);
    moves.push({
      copy: chunk.copy,
      first: chunk.first,
      count: chunk.count,
      to,
      morsels: chunk.morsels,
    });
  }
  return { ok: true, moves, bytes };
}

/**
 * One single-donor extent per run of consecutive moved morsels: what the new import jobs carry,
 * so each target fetches only the morsels it took over (not its original share again).
 *
 * @example movedExtents([{ copy: 0, first: 0, count: 4, to: 'b', morsels: [1, 3] }])
 *   // → [{ copy: 0, first: 1, count: 1, unit: 1, phase: 0, donors: ['b'] }, { …first: 3… }]
 */
export function movedExtents(moves: readonly (Reassignment & { morsels: number[] })[]): Extent[] {
  const out: Extent[] = [];
  for (const m of moves) {
    let start = 0;
    for (let k = 1; k <= m.morsels.length; k++) {
      if (k < m.morsels.length && m.morsels[k] === m.morsels[k - 1]! + 1) continue;
      const first = m.morsels[start]!;
      const count = m.morsels[k - 1]! - first + 1;
      out.push({ copy: m.copy, first, count, unit: count, phase: 0, donors: [m.to] });
      start = k;
    }
  }
  return out;
}

/** Why a donor's share of an import moves: its disk filled up, or it died (issue 15). */
export type ShareLoss = 'disk-full' | 'dead';

/**
 * An import job failed with DISK_FULL (its donor's disk filled up; it freed what it had stored),
 * or its donor died: re-place that donor's whole share of the dataset on other live donors with
 * room (never on a donor holding another copy of the same morsel), reserve the space there,
 * release that donor's reservation, and queue one import job per new donor for just the morsels
 * it took over (copies ≥ 1 fanning out from copy 0's donors) — so the import completes instead of
 * failing. Runs under the dataset's placement lock, so two donors lost at once move their shares
 * one after the other. Returns undefined when the share moved (or the import is over anyway),
 * else the reason the import must fail (no donor has room, or a streamed import cannot be
 * re-placed).
 */
export async function replaceFullDonor(
  deps: DiskFullDeps,
  dataset: DatasetView,
  job: Pick<JobView, 'agentId'>,
  payload: ImportJobPayload,
  loss: ShareLoss = 'disk-full',
): Promise<string | undefined> {
  const full = job.agentId;
  const what = loss === 'dead' ? ' died during the import' : '’s disk is full';
  if (!full || payload.mode !== 'ranged' || payload.extendsFrom !== undefined) {
    const lost =
      loss === 'dead' ? `donor ${full} died during the import` : 'a donor’s disk filled up';
    return `${lost} and this import (streamed, or a prefix extension) cannot be re-placed`;
  }
  const lengthOf = (m: number): number => morselLength(dataset.sizeBytes, dataset.morselSize, m);
  const reserved: string[] = [];
  try {
    return await withTransaction(
      deps.pg,
      async (tx) => {
        if ((await lockDatasetState(tx, dataset.id, 'placement')) !== 'importing') return undefined;
        const extents = await getPlacement(tx, dataset.id);
        const candidates = (await placementCandidates(deps)).filter((c) => c.id !== full);
        const holdersOf = (chunk: Chunk): Set<string> => {
          const others = extents.filter((e) => e.copy !== chunk.copy);
          return new Set(chunk.morsels.flatMap((m) => donorsOfMorsel(others, m)));
        };
        let targets = targetChunks(chunksOf(extents, full), candidates, lengthOf, holdersOf);
        // Declustered copies: whole cycles have twins on every donor; one unit at a time fits.
        if (!targets.ok) {
          targets = targetChunks(unitChunksOf(extents, full), candidates, lengthOf, holdersOf);
        }
        if (!targets.ok) return `donor ${full}${what} and ${targets.reason}`;
        if (targets.moves.length === 0) return undefined;
        // Each reservation is admitted under its donor's row lock (its own transaction): a donor
        // that lost its room meanwhile makes this throw NO_SPACE, and the import fails.
        const ttlSeconds = reservationTtlSeconds(dataset.sizeBytes);
        const placed = reassign(extents, full, targets.moves);
        for (const [agentId, bytes] of targets.bytes) {
          const r = await deps.reservationsRepo.reserve({
            agentId,
            bytes,
            datasetId: dataset.id,
            ttlSeconds,
          });
          reserved.push(r.id);
        }
        const payloadOf = await importPayload(
          deps,
          dataset.id,
          {
            bytesPerDonor: targets.bytes,
            morselSize: dataset.morselSize,
            extents: movedExtents(targets.moves),
          },
          payload.source,
          `agent:${full}`,
          placed,
        );
        await setPlacement(tx, dataset.id, placed);
        await deps.reservationsRepo.releaseDataset(tx, dataset.id, full);
        for (const [agentId, bytes] of targets.bytes) {
          await enqueueJob(tx, {
            kind: 'import',
            datasetId: dataset.id,
            agentId,
            payload: payloadOf('ranged', agentId),
            totalBytes: bytes,
          });
        }
        deps.log.warn(
          { dataset: dataset.id, full, to: Object.fromEntries(targets.bytes) },
          `donor ${loss === 'dead' ? 'died' : 'disk full'}: its share of the import moved to donors with room`,
        );
        reserved.length = 0; // committed with the placement: theirs now
        return undefined;
        // Not retried on a deadlock: its reservations are made in their own transactions.
      },
      { retryConflicts: false },
    );
  } finally {
    // Not placed after all (an error): give the new reservations back.
    for (const id of reserved) await deps.reservationsRepo.release(id).catch(() => undefined);
  }
}
