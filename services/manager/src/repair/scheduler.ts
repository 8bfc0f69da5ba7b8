import type pg from 'pg';
import { getPlacement } from '../repositories/placement.js';
import { releaseRepairLock, tryRepairLock } from '../repositories/repair-lock.js';
import { failureMarks } from '../repositories/failure-marks.js';
import { deleteFaultsOfRuns, faultsOf } from '../repositories/repair-faults.js';
import { cancelJobs, unfinishedRepairJobs } from '../repositories/repair-jobs.js';
import { pruneRepairLog } from '../repositories/repair-log.js';
import {
  repairUnits,
  requeueOrphanedUnits,
  syncWaitingUnits,
  type RepairUnitRow,
  type WantedUnit,
} from '../repositories/repair-units.js';
import { repairableDatasets, type RepairableDataset } from '../repositories/repairable-datasets.js';
import { repairWorkOf, type Departure } from '../placement/repair-work.js';
import { dispatchRepairs } from './dispatch.js';
import { FailureClasses, departures } from './failure-classes.js';
import { releaseLeavers } from './leave.js';
import type { RepairDeps } from './repair-deps.js';

/** A running repair job silent this long (no progress, no commit) is given up (seconds). */
const REPAIR_JOB_SILENT_S = 120;

/**
 * The repair loop: failure classes from soft state, the queue in PostgreSQL rebuilt from what
 * needs repair (copies on departing donors, fault rows, missing copies), units handed to
 * destinations within the caps, leavers released. Only the manager holding the database's
 * repair advisory lock runs it, so two managers never schedule the same work; everything it
 * decides is in the database, so a restarted manager carries on where the last one stopped.
 */
export class RepairScheduler {
  readonly classes: FailureClasses;
  private timer: NodeJS.Timeout | undefined;
  private lock: pg.PoolClient | undefined;
  private ticking: Promise<void> | undefined;
  /** A pass was asked for while one ran: undefined none, else whether it must be full. */
  private again: { full: boolean } | undefined;
  private stopped = false;

  constructor(private readonly deps: RepairDeps) {
    this.classes = new FailureClasses(deps);
  }

  start(): void {
    this.timer = setInterval(() => this.poke(), this.deps.config.repairTickMs);
    this.timer.unref();
    this.poke();
  }

  /**
   * Look for work now (a donor died or was revoked, a donor asked to leave). `full: false` only
   * hands queued units to donors a finished job freed: the queue is still right (commits take
   * their own units off it), so the scan that rebuilds it is skipped. That scan was most of a
   * pass (0.35–0.93 s in the repair benchmark, at load 5), and every donor idled for it between
   * two of its jobs.
   */
  poke(full = true): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = { full: full || (this.again?.full ?? false) };
      return;
    }
    this.ticking = this.tick(full)
      .then(() => undefined)
      .catch((err: unknown) => this.deps.log.error({ err }, 'repair tick failed'))
      .finally(() => {
        this.ticking = undefined;
        const again = this.again;
        this.again = undefined;
        if (again) this.poke(again.full);
      });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.ticking;
    if (this.lock) {
      await releaseRepairLock(this.lock).catch(() => undefined);
      this.lock.release();
      this.lock = undefined;
    }
  }

  /**
   * One pass; false when another manager holds the scheduler lock. `full: false` dispatches the
   * queue as it stands (see {@link poke}); failure classes, stuck jobs and leavers wait for the
   * next full pass (at most REPAIR_TICK_MS away).
   */
  async tick(full = true): Promise<boolean> {
    if (!(await this.holdLock())) return false;
    const { deps } = this;
    const started = performance.now();
    // Where a pass spends its time, by step (ms since the pass started): the first pass of a
    // repair took 10x the second's at the same load (2.9 s against 0.2 s, docs/repair.md).
    const steps: Record<string, number> = {};
    const step = (name: string): void => {
      steps[name] = Math.round(performance.now() - started);
    };
    const marks = await failureMarks(deps.pg);
    step('marks');
    const departing = full
      ? await this.classes.update(marks)
      : departures(marks, (id) => deps.softState.stateOf(id) === 'live');
    step('classes');
    const lostOrGone = new Set(marks.filter((m) => m.lost || m.revoked).map((m) => m.id));
    const readable = (id: string): boolean =>
      !lostOrGone.has(id) && deps.softState.stateOf(id) === 'live';
    const datasets = await repairableDatasets(deps.pg, [...departing.keys()]);
    step('datasets');
    if (full) {
      await this.dropStuckJobs((id) => lostOrGone.has(id) || deps.softState.stateOf(id) === 'dead');
      for (const reservation of await requeueOrphanedUnits(deps.pg)) {
        await deps.reservationsRepo.release(reservation).catch(() => undefined);
      }
      step('requeue');
      const running = (await repairUnits(deps.pg)).filter((u) => u.state === 'running');
      const wanted = await this.scan(datasets, departing, readable, running);
      step('scan');
      await syncWaitingUnits(deps.pg, wanted);
      step('sync');
    }
    const scanned = performance.now();
    const waiting = (await repairUnits(deps.pg)).filter((u) => u.state === 'waiting');
    const dispatched = await dispatchRepairs(deps, waiting, {
      marks,
      departing,
      readable,
      datasets: new Map(datasets.map((d) => [d.id, d])),
    });
    const dispatchMs = Math.round(performance.now() - scanned);
    if (full) {
      await releaseLeavers(
        deps,
        marks.filter((m) => m.leaving && !m.revoked).map((m) => m.id),
      );
      await pruneRepairLog(deps.pg);
    }
    // The pass time bounds how soon a freed donor gets its next job: logged to measure it.
    if (dispatched > 0) {
      const passMs = Math.round(performance.now() - started);
      const scanMs = Math.round(scanned - started);
      deps.log.info(
        { passMs, scanMs, dispatchMs, full, dispatched, waiting: waiting.length, steps },
        'repair pass',
      );
    }
    return true;
  }

  /** What the queue should hold, leaving out runs a running unit already covers. */
  private async scan(
    datasets: readonly RepairableDataset[],
    departing: ReadonlyMap<string, Departure>,
    readable: (id: string) => boolean,
    running: readonly RepairUnitRow[],
  ): Promise<WantedUnit[]> {
    const wanted: WantedUnit[] = [];
    for (const d of datasets) {
      const faults = await faultsOf(this.deps.pg, d.id);
      const { work, staleFaults } = repairWorkOf({
        sizeBytes: d.sizeBytes,
        cachedBytes: d.cachedBytes,
        morselSize: d.morselSize,
        replicas: d.replicas,
        extents: await getPlacement(this.deps.pg, d.id),
        departing,
        readable,
        faults,
      });
      await deleteFaultsOfRuns(
        this.deps.pg,
        d.id,
        staleFaults.map((f) => ({ copy: f.copy, morsels: [f.morsel] })),
      );
      for (const w of work) {
        const covered = running.some(
          (r) =>
            r.datasetId === d.id &&
            r.copy === w.copy &&
            r.first < w.first + w.count &&
            w.first < r.first + r.count,
        );
        if (!covered) wanted.push({ ...w, datasetId: d.id });
      }
    }
    return wanted;
  }

  /**
   * Repair jobs that will not finish: their destination is dead, lost or revoked, or the job is
   * silent past REPAIR_JOB_SILENT_S (its agent crashed and never came back to finish it). Their
   * units are requeued for another destination. (Right after a manager restart every agent is
   * stale until it heartbeats, not dead: nothing is dropped for that.)
   */
  private async dropStuckJobs(gone: (id: string) => boolean): Promise<void> {
    const jobs = await unfinishedRepairJobs(this.deps.pg);
    const stuck = jobs.filter(
      (j) => gone(j.agentId) || (j.state === 'running' && j.silentS > REPAIR_JOB_SILENT_S),
    );
    if (stuck.length === 0) return;
    await cancelJobs(
      this.deps.pg,
      stuck.map((j) => j.id),
      'repair job abandoned: destination gone or silent',
    );
    this.deps.log.warn({ jobs: stuck.map((j) => j.id) }, 'repair jobs abandoned; units requeued');
  }

  private async holdLock(): Promise<boolean> {
    if (this.lock) return true;
    const client = await this.deps.pg.connect();
    try {
      if (await tryRepairLock(client)) {
        // A broken connection loses the lock: forget it and hand the dead client back to the
        // pool (destroyed), or pool.end() would wait for it forever and the manager could not
        // stop after its database restarted; the next tick takes the lock again.
        client.on('error', (err) => {
          if (this.lock !== client) return;
          this.lock = undefined;
          client.release(err);
        });
        this.lock = client;
        return true;
      }
    } catch {
      // fall through: release the connection, try at the next tick
    }
    client.release();
    return false;
  }
}
