import type { RepairQueueView } from '@freeloader/protocol';
import { repairRate, repairedBytesSince } from '../repositories/repair-log.js';
import { repairUnits } from '../repositories/repair-units.js';
import type { FailureClasses } from './failure-classes.js';
import type { RepairDeps } from './repair-deps.js';

/** Units listed in the view (the counts and bytes cover the whole queue). */
const LISTED_UNITS = 200;

/**
 * The repair queue as the console shows it: what waits and runs, the rate (the running jobs'
 * reported rates, else the last minute's completed bytes), the ETA at that rate, and the
 * threshold after which a silent donor is lost.
 */
export async function repairQueueView(
  deps: Pick<RepairDeps, 'pg'>,
  classes: Pick<FailureClasses, 'repairAfter'>,
): Promise<RepairQueueView> {
  const units = await repairUnits(deps.pg);
  const waiting = units.filter((u) => u.state === 'waiting');
  const running = units.filter((u) => u.state === 'running');
  const bytes = units.reduce((s, u) => s + u.bytes, 0);
  const reported = await repairRate(deps.pg);
  const rate = reported > 0 ? reported : (await repairedBytesSince(deps.pg, 60)) / 60;
  const threshold = await classes.repairAfter();
  return {
    waitingUnits: waiting.length,
    runningUnits: running.length,
    waitingMorsels: waiting.reduce((s, u) => s + u.morsels.length, 0),
    runningMorsels: running.reduce((s, u) => s + u.morsels.length, 0),
    bytes,
    rate,
    etaSeconds: bytes === 0 ? 0 : rate > 0 ? Math.ceil(bytes / rate) : null,
    doneBytesLastHour: await repairedBytesSince(deps.pg, 3600),
    repairAfterMs: threshold.ms,
    repairAfterBasis: threshold.basis,
    units: units.slice(0, LISTED_UNITS).map((u) => ({
      id: u.id,
      datasetId: u.datasetId,
      copy: u.copy,
      morsels: u.morsels.length,
      bytes: u.bytes,
      liveCopies: u.liveCopies,
      reason: u.reason,
      fromAgent: u.from,
      toAgent: u.to,
      state: u.state,
      enqueuedAt: u.enqueuedAt.toISOString(),
    })),
  };
}
