import { repairAfter, type RepairAfterBasis } from '../placement/repair-after.js';
import {
  clearLost,
  markLost,
  recentOutages,
  type FailureMarks,
} from '../repositories/failure-marks.js';
import type { Departure } from '../placement/repair-work.js';
import type { RepairDeps } from './repair-deps.js';

/** How often the observed-outage threshold is recomputed (milliseconds). */
const THRESHOLD_REFRESH_MS = 60_000;

/**
 * Failure classes (ThriftStore §3.2): a donor silent past the stale threshold is offline (soft
 * state: not read, not placed on, not repaired); silent past REPAIR_AFTER_MS it is lost, a mark
 * persisted so a manager restart keeps it; heartbeating again it is reintegrated (mark cleared;
 * what repair already replaced is freed by the delete jobs the commits queued for it). Outages
 * that end are recorded: their distribution sizes REPAIR_AFTER_MS.
 */
export class FailureClasses {
  private threshold: { ms: number; basis: RepairAfterBasis; at: number } | undefined;

  constructor(private readonly deps: RepairDeps) {}

  /** REPAIR_AFTER_MS now, and where it came from. */
  async repairAfter(): Promise<{ ms: number; basis: RepairAfterBasis }> {
    const now = Date.now();
    if (!this.threshold || now - this.threshold.at > THRESHOLD_REFRESH_MS) {
      const outages =
        this.deps.config.repairAfterMs === undefined ? await recentOutages(this.deps.pg) : [];
      this.threshold = { ...repairAfter(outages, this.deps.config.repairAfterMs), at: now };
    }
    return this.threshold;
  }

  /**
   * Mark donors lost or reintegrated from soft state; returns the donors whose copies must be
   * re-created (lost, leaving, revoked) with how they go.
   */
  async update(marks: readonly FailureMarks[]): Promise<Map<string, Departure>> {
    const { ms } = await this.repairAfter();
    await this.recordOutages();
    const departing = new Map<string, Departure>();
    for (const a of marks) {
      if (a.bandwidthOnly) continue;
      if (a.revoked) {
        departing.set(a.id, 'revoked');
        continue;
      }
      let lost = a.lost;
      if (this.deps.softState.stateOf(a.id) === 'live') {
        if (lost && (await clearLost(this.deps.pg, a.id))) {
          lost = false;
          this.deps.log.info({ agent: a.id }, 'lost donor is back: reintegrated');
          this.deps.events.publish({ type: 'agent', agentId: a.id, state: 'live' });
        }
      } else {
        const silent = this.deps.softState.silentForMs(a.id);
        if (!lost && silent >= ms && (await markLost(this.deps.pg, a.id))) {
          lost = true;
          this.deps.log.warn({ agent: a.id, silentMs: silent }, 'donor lost: repairing its copies');
          this.deps.events.publish({ type: 'agent', agentId: a.id, state: 'lost' });
        }
      }
      if (a.leaving) departing.set(a.id, 'leaving');
      else if (lost) departing.set(a.id, 'lost');
    }
    return departing;
  }

  /**
   * Record the transient outages soft state saw end since the last pass, on this manager (the
   * others' are written by their own flushes): the flush writes them with the sightings that
   * ended them, leaving out lost (still marked: a returning one is cleared after this),
   * revoked and bandwidth-only donors, and silences another manager heard the donor during.
   */
  private async recordOutages(): Promise<void> {
    await this.deps.liveness.flush();
  }
}

/**
 * The donors whose copies must be re-created, from the persisted marks alone (no side effects:
 * nothing is marked lost or reintegrated, as {@link FailureClasses.update} does). A lost donor
 * heartbeating again is left out: the next full pass reintegrates it.
 */
export function departures(
  marks: readonly FailureMarks[],
  isLive: (agentId: string) => boolean,
): Map<string, Departure> {
  const departing = new Map<string, Departure>();
  for (const a of marks) {
    if (a.bandwidthOnly) continue;
    if (a.revoked) departing.set(a.id, 'revoked');
    else if (a.leaving) departing.set(a.id, 'leaving');
    else if (a.lost && !isLive(a.id)) departing.set(a.id, 'lost');
  }
  return departing;
}
