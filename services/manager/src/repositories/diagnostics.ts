import type { AgentDiagnostics } from '@freeloader/protocol';
import type { Queryable } from '../db/pool.js';

/**
 * Keep an agent's join-time probe on its row (placement reads it when the agent's heartbeat is
 * not in memory, e.g. after a manager restart). Written only when a new probe arrives: agents
 * repeat it in every heartbeat, and `previous` is what the last one carried.
 */
export async function saveDiagnostics(
  db: Queryable,
  agentId: string,
  previous: AgentDiagnostics | undefined,
  next: AgentDiagnostics | undefined,
): Promise<void> {
  if (!next || previous?.measuredAt === next.measuredAt) return;
  await db.query(
    `UPDATE agents SET disk_read_rate = $2, disk_read_cached = $3, download_rate = $4,
                       upload_rate = $5, diagnosed_at = $6
     WHERE id = $1`,
    [
      agentId,
      next.diskReadRate,
      next.diskCached ?? null,
      next.downloadRate,
      next.uploadRate,
      next.measuredAt,
    ],
  );
}
