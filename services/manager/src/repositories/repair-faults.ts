/** Fault rows (copies known bad) as repair reads and clears them. */
import type { Queryable } from '../db/pool.js';

/** Fault rows of a dataset (copies known bad). */
export async function faultsOf(
  db: Queryable,
  datasetId: string,
): Promise<Array<{ copy: number; morsel: number; agentId: string }>> {
  const { rows } = await db.query<{ copy: number; morsel: string; agent_id: string }>(
    'SELECT copy, morsel, agent_id FROM morsel_faults WHERE dataset_id = $1',
    [datasetId],
  );
  return rows.map((r) => ({ copy: r.copy, morsel: Number(r.morsel), agentId: r.agent_id }));
}

/** Drop fault rows of `morsels` of one copy (repaired, or no longer placed there). */
export async function deleteFaults(
  db: Queryable,
  datasetId: string,
  copy: number,
  morsels: readonly number[],
): Promise<void> {
  await db.query(
    'DELETE FROM morsel_faults WHERE dataset_id = $1 AND copy = $2 AND morsel = ANY($3::bigint[])',
    [datasetId, copy, morsels],
  );
}

/**
 * Drop the fault rows of several copies' morsels at once (units committed together): one
 * statement for the whole batch.
 */
export async function deleteFaultsOfRuns(
  db: Queryable,
  datasetId: string,
  runs: ReadonlyArray<{ copy: number; morsels: readonly number[] }>,
): Promise<void> {
  const copies = runs.flatMap((r) => r.morsels.map(() => r.copy));
  const morsels = runs.flatMap((r) => r.morsels);
  if (morsels.length === 0) return;
  await db.query(
    `DELETE FROM morsel_faults f USING unnest($2::int[], $3::bigint[]) AS x(copy, morsel)
     WHERE f.dataset_id = $1 AND f.copy = x.copy AND f.morsel = x.morsel`,
    [datasetId, copies, morsels],
  );
}
