import fp from 'fastify-plugin';
import type pg from 'pg';
import type { AuditAction, AuditEntry } from '@freeloader/protocol';

/** One audit row to write (the time is the database's). */
export interface AuditRecord {
  userId: string | null;
  agentId: string | null;
  actor: string;
  action: AuditAction;
  target: string | null;
  address: string;
  outcome: 'ok' | 'refused';
  details?: Record<string, unknown>;
}

interface AuditRow {
  id: string;
  at: Date;
  user_id: string | null;
  agent_id: string | null;
  actor: string;
  action: AuditAction;
  target: string | null;
  address: string;
  outcome: 'ok' | 'refused';
  details: Record<string, unknown>;
}

/** The audit log: rows are only added, and read newest first. */
export function createAuditRepo(pool: pg.Pool) {
  return {
    async record(r: AuditRecord): Promise<void> {
      await pool.query(
        `INSERT INTO audit_log (user_id, agent_id, actor, action, target, address, outcome, details)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
        [
          r.userId,
          r.agentId,
          r.actor,
          r.action,
          r.target,
          r.address,
          r.outcome,
          JSON.stringify(r.details ?? {}),
        ],
      );
    },

    /** Up to `limit` entries older than `before` (an id), newest first (by the number: 10 > 9). */
    async page(limit: number, before?: string): Promise<AuditEntry[]> {
      const { rows } = await pool.query<AuditRow>(
        `SELECT id::text, at, user_id, agent_id, actor, action, target, address, outcome, details
         FROM audit_log WHERE ($1::bigint IS NULL OR id < $1::bigint)
         ORDER BY audit_log.id DESC LIMIT $2`,
        [before ?? null, limit],
      );
      return rows.map((r) => ({
        id: r.id,
        at: r.at.toISOString(),
        actor: r.actor,
        userId: r.user_id,
        agentId: r.agent_id,
        action: r.action,
        target: r.target,
        address: r.address,
        outcome: r.outcome,
        details: r.details,
      }));
    },
  };
}
export type AuditRepo = ReturnType<typeof createAuditRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    auditRepo: AuditRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('auditRepo', createAuditRepo(app.pg));
  },
  { name: 'audit-repo', dependencies: ['postgres'] },
);
