import type { FastifyInstance } from 'fastify';
import type pg from 'pg';
import {
  FreeLoaderError,
  type RelocateJobPayload,
  type RelocationCommitResponse,
} from '@freeloader/protocol';
import { withTransaction } from '../db/pool.js';
import { getPlacement, setPlacement } from '../repositories/placement.js';
import type { RelocateCommitInfo } from './change-quota.js';
import { reassign } from '../placement/move-extents.js';

interface JobRow {
  kind: string;
  state: string;
  agent_id: string | null;
  dataset_id: string | null;
  payload: RelocateCommitInfo & RelocateJobPayload;
  result: (RelocationCommitResponse & { committed?: boolean }) | null;
}

/**
 * The agent pushed every morsel of a relocate job: in one transaction, point placement at the
 * targets (splitting extents where only part moved), turn the targets' reservations into used
 * space and take the same bytes off the old donor's ledger. Idempotent: a retried commit
 * answers the first one's result.
 */
export async function commitRelocation(
  app: FastifyInstance,
  jobId: string,
  agentId: string,
): Promise<RelocationCommitResponse> {
  const done = await withTransaction(app.pg, async (tx) => {
    const { rows } = await tx.query<JobRow>(
      'SELECT kind, state, agent_id, dataset_id, payload, result FROM jobs WHERE id = $1 FOR UPDATE',
      [jobId],
    );
    const job = rows[0];
    if (!job || job.kind !== 'relocate' || job.agent_id !== agentId || !job.dataset_id) {
      throw new FreeLoaderError('JOB_NOT_FOUND', `no relocate job ${jobId} for this agent`);
    }
    if (job.result?.committed) return job.result;
    if (job.state !== 'running') {
      throw new FreeLoaderError('CONFLICT', `relocate job ${jobId} is ${job.state}`);
    }
    const datasetId = job.dataset_id;
    const ds = await tx.query<{ state: string }>(
      'SELECT state FROM datasets WHERE id = $1 FOR UPDATE',
      [datasetId],
    );
    if (ds.rows[0]?.state !== 'ready') {
      throw new FreeLoaderError('CONFLICT', `dataset ${datasetId} is no longer ready`);
    }
    const p = job.payload;
    await setPlacement(
      tx,
      datasetId,
      reassign(await getPlacement(tx, datasetId), p.from, p.chunks),
    );
    const movedBytes = await moveLedger(tx, datasetId, p);
    const result: RelocationCommitResponse = {
      datasetId,
      movedMorsels: Math.round(movedBytes / p.morselSize),
      movedBytes,
    };
    await tx.query('UPDATE jobs SET result = $2, updated_at = now() WHERE id = $1', [
      jobId,
      { ...result, committed: true },
    ]);
    return result;
  });
  const { committed: _, ...answer } = done as RelocationCommitResponse & { committed?: boolean };
  return answer;
}

/**
 * Targets' reservations become used bytes; the old donor's committed reservations of the
 * dataset shrink by as much. Agent rows are locked first, in id order, as `reserve` does.
 */
async function moveLedger(
  tx: pg.PoolClient,
  datasetId: string,
  p: RelocateCommitInfo,
): Promise<number> {
  const agents = [p.from, ...Object.keys(p.reservations)].sort();
  await tx.query('SELECT 1 FROM agents WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE', [
    agents,
  ]);
  let moved = 0;
  for (const [to, reservationId] of Object.entries(p.reservations)) {
    // Committed even if it lapsed meanwhile: the bytes are on the target now.
    const { rows } = await tx.query<{ bytes: string }>(
      `UPDATE reservations SET state = 'committed', updated_at = now()
       WHERE id = $1 AND agent_id = $2 AND state IN ('active', 'expired') RETURNING bytes`,
      [reservationId, to],
    );
    const bytes = Number(rows[0]?.bytes ?? 0);
    await tx.query('UPDATE agents SET used_bytes = used_bytes + $2 WHERE id = $1', [to, bytes]);
    moved += p.bytesPerTarget[to] ?? bytes;
  }
  const { rows: held } = await tx.query<{ id: string; bytes: string }>(
    `SELECT id, bytes FROM reservations
     WHERE agent_id = $1 AND dataset_id = $2 AND state = 'committed'
     ORDER BY bytes DESC FOR UPDATE`,
    [p.from, datasetId],
  );
  let left = moved;
  for (const r of held) {
    if (left <= 0) break;
    const take = Math.min(Number(r.bytes), left);
    if (take === Number(r.bytes)) {
      await tx.query(
        `UPDATE reservations SET state = 'released', updated_at = now() WHERE id = $1`,
        [r.id],
      );
    } else {
      await tx.query(
        'UPDATE reservations SET bytes = bytes - $2, updated_at = now() WHERE id = $1',
        [r.id, take],
      );
    }
    left -= take;
  }
  await tx.query('UPDATE agents SET used_bytes = greatest(0, used_bytes - $2) WHERE id = $1', [
    p.from,
    moved - left,
  ]);
  return moved;
}

/** Give back a failed relocation's target reservations (nothing was committed). */
export async function abortRelocation(
  app: FastifyInstance,
  jobId: string,
  agentId: string,
): Promise<void> {
  const { rows } = await app.pg.query<JobRow>(
    'SELECT kind, state, agent_id, dataset_id, payload, result FROM jobs WHERE id = $1',
    [jobId],
  );
  const job = rows[0];
  if (!job || job.kind !== 'relocate' || job.agent_id !== agentId) {
    throw new FreeLoaderError('JOB_NOT_FOUND', `no relocate job ${jobId} for this agent`);
  }
  if (job.result?.committed) return;
  for (const id of Object.values(job.payload.reservations ?? {})) {
    await app.reservationsRepo.release(id).catch(() => undefined);
  }
}
