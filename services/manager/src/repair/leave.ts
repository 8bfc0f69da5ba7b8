import { FreeLoaderError, type LeaveProgress } from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { leaveState, placedOn, releaseAgent } from '../repositories/donor-leave.js';
import { markLeaving } from '../repositories/failure-marks.js';
import { repairUnits } from '../repositories/repair-units.js';
import type { RepairDeps } from './repair-deps.js';

/**
 * A donor asks to leave (`freeloader agent --leave`, its settings page): from now on nothing new
 * is placed on it, and repair re-creates every copy it holds elsewhere, reading them from it
 * while it is still there; once placement names it nowhere it is released.
 */
export async function startLeaving(
  deps: Pick<RepairDeps, 'pg' | 'log' | 'events'>,
  agentId: string,
): Promise<LeaveProgress> {
  if (!(await markLeaving(deps.pg, agentId))) {
    throw new FreeLoaderError('AGENT_NOT_FOUND', `no agent ${agentId}`);
  }
  deps.log.info({ agent: agentId }, 'donor leaving: re-creating its copies elsewhere');
  deps.events.publish({ type: 'agent', agentId, state: 'leaving' });
  return leaveProgress(deps, agentId);
}

/** How far a leave has come. */
export async function leaveProgress(
  deps: Pick<RepairDeps, 'pg'>,
  agentId: string,
): Promise<LeaveProgress> {
  const state = await leaveState(deps.pg, agentId);
  if (!state) throw new FreeLoaderError('AGENT_NOT_FOUND', `no agent ${agentId}`);
  const held = await placedOn(deps.pg, agentId);
  return {
    leaving: state.leaving,
    released: state.leaving && state.released,
    remainingMorsels: held.morsels,
    remainingBytes: held.bytes,
  };
}

/**
 * Release leaving donors whose copies all live elsewhere now: revoked, ledger zero, their
 * unfinished jobs cancelled. Returns the ids released.
 */
export async function releaseLeavers(
  deps: Pick<RepairDeps, 'pg' | 'log' | 'events' | 'softState'>,
  leaving: readonly string[],
): Promise<string[]> {
  if (leaving.length === 0) return [];
  const busy = new Set((await repairUnits(deps.pg)).flatMap((u) => (u.from ? [u.from] : [])));
  const released: string[] = [];
  for (const id of leaving) {
    if (busy.has(id) || (await placedOn(deps.pg, id)).morsels > 0) continue;
    await withTransaction(deps.pg, (tx) => releaseAgent(tx, id));
    deps.softState.forget(id);
    deps.log.info({ agent: id }, 'leaving donor released: its copies all live elsewhere');
    deps.events.publish({ type: 'agent', agentId: id, state: 'revoked' });
    released.push(id);
  }
  return released;
}
