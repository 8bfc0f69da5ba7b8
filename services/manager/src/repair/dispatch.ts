import {
  CAPABILITY_TTL_S,
  FreeLoaderError,
  REPAIR_JOB_BYTES,
  SHA256_BYTES,
  donorOf,
  morselLength,
  repairSubject,
  signCapability,
  type Extent,
  type RepairJobPayload,
  type RepairMorsel,
} from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { byDanger, type Departure } from '../placement/repair-work.js';
import { pickRepairDestination } from '../placement/repair-destination.js';
import { enqueueJob } from '../repositories/jobs.js';
import { getHashes, getPlacement } from '../repositories/placement.js';
import type { FailureMarks } from '../repositories/failure-marks.js';
import { pendingDeletes, repairTransfers, runningRepairJobs } from '../repositories/repair-jobs.js';
import { reserveRepairUnits } from '../repositories/repair-reservations.js';
import { markUnitsRunning, type RepairUnitRow } from '../repositories/repair-units.js';
import type { RepairableDataset } from '../repositories/repairable-datasets.js';
import { RepairChannels } from './channels.js';
import type { RepairDeps } from './repair-deps.js';

/** Lifetime of a repair job's destination reservations and read capability (seconds). */
const REPAIR_TTL_S = Math.max(CAPABILITY_TTL_S, 6 * 3600);

/** The donors' situation at this tick, as dispatch needs it. */
export interface DispatchView {
  marks: readonly FailureMarks[];
  departing: ReadonlyMap<string, Departure>;
  readable: (agentId: string) => boolean;
  datasets: ReadonlyMap<string, RepairableDataset>;
}

/** A repair job being put together: one destination, one dataset, units in danger order. */
interface Group {
  to: string;
  dataset: RepairableDataset;
  units: Array<{ unit: RepairUnitRow; morsels: RepairMorsel[] }>;
  sources: Set<string>;
  seeds: boolean;
  bytes: number;
  /** Queued behind another job of its destination (a repair channel). */
  behind: boolean;
}

/**
 * Hand waiting units to destinations, most dangerous first, within the caps: a donor receives
 * for one repair job at a time and sends for one at a time (ThriftStore's simulator: a node's
 * upload and download channels each serve one transfer), so each direction of its repair
 * traffic stays within b, and every live donor can send and receive at once; jobs that read
 * from the source are at most B / b at once. Units of one dataset that the same destination may
 * hold and the job's own sources can serve ride in one job (up to REPAIR_JOB_BYTES), each
 * committed alone; a unit needing another source starts a job of its own, so a sender is never
 * tied up by a job that asks it for a fraction of b. A unit whose only sender is busy feeding
 * one receiver may be queued behind that job, for the same receiver (RepairChannels): the
 * destination runs the two one after the other.
 */
export async function dispatchRepairs(
  deps: RepairDeps,
  waiting: readonly RepairUnitRow[],
  view: DispatchView,
): Promise<number> {
  const startedAt = performance.now();
  const running = await runningRepairJobs(deps.pg);
  const receiving = new Set(running.map((j) => j.agentId));
  const sending = new Set(running.flatMap((j) => j.sourceAgents));
  const channels = new RepairChannels(running);
  const b = deps.config.repairDonorRateBps;
  const seedRate = Math.min(b, deps.config.repairSourceRateBps);
  let seedSlots =
    Math.max(1, Math.floor(deps.config.repairSourceRateBps / seedRate)) -
    running.filter((j) => j.seeds).length;
  const transfers = await repairTransfers(deps.pg);
  const deletes = await pendingDeletes(deps.pg);
  const urls = new Map(
    view.marks.map((m) => [m.id, deps.softState.heartbeatOf(m.id)?.url ?? m.url]),
  );
  const targets = view.marks.filter(
    (m) =>
      !m.revoked &&
      !m.lost &&
      !m.leaving &&
      !m.bandwidthOnly &&
      deps.softState.stateOf(m.id) === 'live',
  );
  const extentsOf = memo((id: string) => getPlacement(deps.pg, id));
  const hashesOf = memo((id: string) => getHashes(deps.pg, id));
  const groups: Group[] = [];

  const ordered = [...waiting].sort((x, y) =>
    byDanger(
      { ...x, enqueuedAt: x.enqueuedAt.getTime() },
      { ...y, enqueuedAt: y.enqueuedAt.getTime() },
    ),
  );
  for (const unit of ordered) {
    const dataset = view.datasets.get(unit.datasetId);
    if (!dataset) continue;
    const extents = await extentsOf(unit.datasetId);
    const hashes = await hashesOf(unit.datasetId);
    const holders = holdersOf(extents, unit.morsels);
    // Ride along in an open job whose destination may hold these morsels and whose own sources
    // can serve all of them (a seeding unit only in a seeding job).
    let group: Group | undefined;
    let plan: ReturnType<typeof sourcesFor>;
    for (const g of groups) {
      if (g.dataset.id !== unit.datasetId || g.bytes + unit.bytes > REPAIR_JOB_BYTES) continue;
      if (holders.has(g.to)) continue;
      plan = sourcesFor(unit, extents, view.readable, (id) => !g.sources.has(id));
      if (plan && (!plan.seeds || g.seeds)) {
        group = g;
        break;
      }
    }
    if (!group) plan = sourcesFor(unit, extents, view.readable, (id) => sending.has(id));
    // Every holder busy: queue the unit behind a channel (see RepairChannels) that can take it.
    let chainedTo: string | undefined;
    if (!group && !plan) {
      const chained = sourcesFor(unit, extents, view.readable, (id) => !channels.chainTo(id));
      const sender = chained?.sources.size === 1 ? [...chained.sources][0]! : undefined;
      const to = sender === undefined ? undefined : channels.chainTo(sender);
      if (chained && !chained.seeds && to && !holders.has(to) && !view.departing.has(to)) {
        if (!deletes.has(`${to}:${unit.datasetId}`)) {
          plan = chained;
          chainedTo = to;
        }
      }
    }
    if (!plan) continue;
    if (plan.seeds && !(group?.seeds ?? false) && (seedSlots <= 0 || !dataset.sourceUri)) continue;
    const excluded = new Set([...receiving, ...plan.sources, ...view.departing.keys()]);
    for (const k of deletes) if (k.endsWith(`:${unit.datasetId}`)) excluded.add(k.split(':')[0]!);
    const candidates = targets.map((t) => ({
      id: t.id,
      freeBytes: t.freeBytes,
      transfers: transfers.get(t.id) ?? 0,
    }));
    const pick = (also: Iterable<string>): string | undefined =>
      pickRepairDestination(candidates, unit.bytes, holders, new Set([...excluded, ...also]));
    // Donors not sending yet receive first: each may still have units to send, which need a
    // receiver other than itself; filling the senders' download slots first can leave the last
    // sender with only itself free (three donors: A→B, B→A, and C waits a whole job).
    const to = group?.to ?? chainedTo ?? pick(sending) ?? pick([]);
    if (!to) continue;
    // Room is checked here against the tick's free space and reserved once per job, with the
    // job (queueGroup); a reservation per unit cost a transaction each.
    const target = targets.find((t) => t.id === to);
    if (!target || target.freeBytes < unit.bytes) continue;
    target.freeBytes -= unit.bytes;
    if (!group) {
      const behind = chainedTo !== undefined;
      group = { to, dataset, units: [], sources: new Set(), seeds: false, bytes: 0, behind };
      groups.push(group);
      receiving.add(to);
      // A group's sources are those of its first unit: later units ride along only on them.
      channels.add({ agentId: to, sourceAgents: [...plan.sources] });
    }
    if (plan.seeds && !group.seeds) seedSlots--;
    group.seeds ||= plan.seeds;
    for (const s of plan.sources) {
      group.sources.add(s);
      sending.add(s);
    }
    group.bytes += unit.bytes;
    group.units.push({
      unit,
      morsels: unit.morsels.map((m) => ({
        index: m,
        length: morselLength(dataset.sizeBytes, dataset.morselSize, m),
        sha256: hashes.subarray(m * SHA256_BYTES, (m + 1) * SHA256_BYTES).toString('hex'),
        donors: (plan.perMorsel.get(m) ?? []).map((id) => urls.get(id)!).filter(Boolean),
      })),
    });
  }
  // Side by side: each job locks only its own destination's agent row and its own units, and
  // one after another the last of five first jobs was queued 0.35 s after the first (load 5).
  // Jobs that start at once first: those queued behind them are not needed before they end.
  // Timed (ms since dispatch started) to see whether planning or the job transactions hold up
  // the first jobs of a repair (docs/repair.md, session 15).
  const ms: Record<string, number> = { planned: Math.round(performance.now() - startedAt) };
  for (const behind of [false, true]) {
    const batch = groups.filter((g) => g.behind === behind);
    await Promise.all(batch.map((g) => queueGroup(deps, g, g.seeds ? seedRate : b)));
    ms[behind ? 'queuedBehind' : 'queuedFirst'] = Math.round(performance.now() - startedAt);
  }
  if (groups.length > 0) deps.log.info({ ms, jobs: groups.length }, 'repair dispatch');
  return groups.reduce((n, g) => n + g.units.length, 0);
}

/** Queue one group as a repair job for its destination and mark its units running. */
async function queueGroup(deps: RepairDeps, g: Group, rate: number): Promise<void> {
  const d = g.dataset;
  const payload: RepairJobPayload = {
    datasetId: d.id,
    morselSize: d.morselSize,
    readCapability: signCapability(deps.signingKeys.privateKey, {
      ds: d.id,
      ops: ['read'],
      sub: repairSubject(g.to),
      ...(g.sources.size > 0 ? { aud: [...g.sources] } : {}),
      exp: Math.floor(Date.now() / 1000) + REPAIR_TTL_S,
    }),
    ...(d.sourceUri
      ? {
          source: {
            uri: d.sourceUri,
            size: d.sizeBytes,
            etag: d.etag,
            lastModified: d.lastModified,
          },
        }
      : {}),
    rateBytesPerS: rate,
    sourceAgents: [...g.sources],
    seeds: g.seeds,
    units: g.units.map((u) => ({ unitId: u.unit.id, morsels: u.morsels })),
  };
  // One transaction, so the agent hears of the job only once its units name it. Queued alone,
  // the job woke its agent at once, and the claim (FOR UPDATE SKIP LOCKED) skipped the row the
  // units' job_id foreign-key checks held (FOR KEY SHARE): the agent claimed nothing and waited
  // out its job channel (25 s, JOB_WAIT_MS) for three of the five first jobs of the repair
  // benchmark, which was most of its wall time (3.8 MB/s against the caps' 41).
  let job;
  try {
    job = await withTransaction(deps.pg, async (tx) => {
      const reservationIds = await reserveRepairUnits(tx, {
        agentId: g.to,
        datasetId: d.id,
        bytes: g.units.map((u) => u.unit.bytes),
        ttlSeconds: REPAIR_TTL_S,
      });
      const queued = await enqueueJob(tx, {
        kind: 'repair',
        datasetId: d.id,
        agentId: g.to,
        payload,
        totalBytes: g.bytes,
      });
      await markUnitsRunning(
        tx,
        queued.id,
        g.to,
        g.units.map((u, i) => ({ id: u.unit.id, reservationId: reservationIds[i]! })),
      );
      return queued;
    });
  } catch (e) {
    // The destination filled or left since the tick read it: its units wait for the next tick.
    if (e instanceof FreeLoaderError && (e.code === 'NO_SPACE' || e.code === 'AGENT_NOT_FOUND'))
      return;
    throw e;
  }
  deps.log.info(
    {
      job: job.id,
      dataset: d.id,
      to: g.to,
      from: [...g.sources],
      units: g.units.length,
      bytes: g.bytes,
      rate,
    },
    'repair queued',
  );
}

/**
 * Where each morsel of a unit can be read: readable donors holding a good copy (its own copy
 * only when its donor is leaving: still readable, and the copy is fine), none of them busy with
 * another repair. Undefined when some morsel has holders but all are busy (wait for them);
 * `seeds` when some morsel has no readable copy at all (only the source has it).
 */
export function sourcesFor(
  unit: Pick<RepairUnitRow, 'copy' | 'morsels' | 'reason'>,
  extents: readonly Extent[],
  readable: (agentId: string) => boolean,
  isBusy: (agentId: string) => boolean,
): { perMorsel: Map<number, string[]>; sources: Set<string>; seeds: boolean } | undefined {
  const perMorsel = new Map<number, string[]>();
  const sources = new Set<string>();
  let seeds = false;
  for (const m of unit.morsels) {
    const holders = extents
      .filter(
        (e) =>
          m >= e.first &&
          m < e.first + e.count &&
          (e.copy !== unit.copy || unit.reason === 'leaving'),
      )
      .map((e) => donorOf(e, m))
      .filter(readable);
    if (holders.length === 0) {
      seeds = true;
      continue;
    }
    const free = holders.filter((h) => !isBusy(h));
    if (free.length === 0) return undefined;
    // One source per morsel keeps each donor's share within its cap; prefer one already used.
    const pick = free.find((h) => sources.has(h)) ?? free[0]!;
    sources.add(pick);
    perMorsel.set(m, [pick]);
  }
  return { perMorsel, sources, seeds };
}

/** Every donor placement names for any of `morsels`, in any copy. */
function holdersOf(extents: readonly Extent[], morsels: readonly number[]): Set<string> {
  const out = new Set<string>();
  for (const m of morsels) {
    for (const e of extents) if (m >= e.first && m < e.first + e.count) out.add(donorOf(e, m));
  }
  return out;
}

function memo<T>(fn: (k: string) => Promise<T>): (k: string) => Promise<T> {
  const cache = new Map<string, Promise<T>>();
  return (k) => {
    let v = cache.get(k);
    if (!v) {
      v = fn(k);
      cache.set(k, v);
    }
    return v;
  };
}
