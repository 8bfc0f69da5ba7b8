/** What a leaving donor still holds and its release once repair moved it. */
import type { Extent } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/** Bytes a donor still holds by placement (what a leave has yet to move). */
export function heldMorsels(extents: readonly Extent[], agentId: string): number {
  let n = 0;
  for (const e of extents) {
    if (!e.donors.includes(agentId)) continue;
    const slots = e.donors.filter((d) => d === agentId).length;
    const cycle = e.unit * e.donors.length;
    // Whole cycles hold `slots × unit` each; the tail is counted exactly below.
    const whole = Math.floor(e.count / cycle);
    n += whole * slots * e.unit;
    for (let m = e.first + whole * cycle; m < e.first + e.count; m++) {
      const slot = (Math.floor((m - e.first) / e.unit) + e.phase) % e.donors.length;
      if (e.donors[slot] === agentId) n++;
    }
  }
  return n;
}

/** Morsels and bytes placement still puts on `agentId`, over every dataset. */
export async function placedOn(
  db: Queryable,
  agentId: string,
): Promise<{ morsels: number; bytes: number }> {
  const { rows } = await db.query<{
    morsel_size: number;
    copy: number;
    first: string;
    count: string;
    unit: number;
    phase: number;
    donors: string[];
  }>(
    `SELECT d.morsel_size, e.copy, e.first, e.count, e.unit, e.phase, e.donors::text[] AS donors
     FROM placement_extents e JOIN datasets d ON d.id = e.dataset_id
     WHERE $1::uuid = ANY(e.donors)`,
    [agentId],
  );
  let morsels = 0;
  let bytes = 0;
  for (const r of rows) {
    const n = heldMorsels([{ ...r, first: Number(r.first), count: Number(r.count) }], agentId);
    morsels += n;
    bytes += n * r.morsel_size;
  }
  return { morsels, bytes };
}

/**
 * Release a donor that left: revoked, its ledger zero (reservations released, used 0) and its
 * unfinished jobs cancelled. Runs on the caller's transaction.
 */
export async function releaseAgent(tx: Queryable, agentId: string): Promise<void> {
  await tx.query(
    'UPDATE agents SET revoked_at = coalesce(revoked_at, now()), used_bytes = 0 WHERE id = $1',
    [agentId],
  );
  await tx.query(
    `UPDATE reservations SET state = 'released', updated_at = now()
     WHERE agent_id = $1 AND state IN ('active', 'committed')`,
    [agentId],
  );
  await tx.query(
    `UPDATE jobs SET state = 'cancelled', updated_at = now()
     WHERE agent_id = $1 AND state IN ('queued', 'running')`,
    [agentId],
  );
}

/** Whether the donor asked to leave and whether it has been released. */
export async function leaveState(
  db: Queryable,
  agentId: string,
): Promise<{ leaving: boolean; released: boolean } | undefined> {
  const { rows } = await db.query<{ leaving: boolean; released: boolean }>(
    `SELECT leaving_at IS NOT NULL AS leaving, revoked_at IS NOT NULL AS released
     FROM agents WHERE id = $1`,
    [agentId],
  );
  return rows[0];
}
