import fp from 'fastify-plugin';
import type pg from 'pg';
import {
  formatSize,
  FreeLoaderError,
  RESERVATION_TTL_S,
  type ReservationRequest,
  type ReservationView,
} from '@freeloader/protocol';
import { withTransaction, type Queryable } from '../db/pool.js';
import { iso } from './rows.js';

interface ReservationRow {
  id: string;
  agent_id: string;
  dataset_id: string | null;
  bytes: number;
  state: ReservationView['state'];
  expires_at: Date;
  lapsed: boolean;
}

const COLUMNS = 'id, agent_id, dataset_id, bytes, state, expires_at, expires_at <= now() AS lapsed';

const toView = (r: ReservationRow): ReservationView => ({
  id: r.id,
  agentId: r.agent_id,
  datasetId: r.dataset_id,
  bytes: r.bytes,
  state: r.state,
  expiresAt: iso(r.expires_at),
});

/** Mark lapsed active reservations expired (all agents, or one). Returns how many. */
export async function sweepExpiredReservations(db: Queryable, agentId?: string): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE reservations SET state = 'expired', updated_at = now()
     WHERE state = 'active' AND expires_at <= now() AND ($1::uuid IS NULL OR agent_id = $1)`,
    [agentId ?? null],
  );
  return rowCount ?? 0;
}

/**
 * Space held by prefix extensions in flight: for each dataset extending now, the bytes of its
 * active reservations per donor (what abandoning the extension gives back).
 */
export async function extensionReservations(
  db: Queryable,
): Promise<Map<string, Map<string, number>>> {
  const { rows } = await db.query<{ dataset_id: string; agent_id: string; bytes: string }>(
    `SELECT r.dataset_id, r.agent_id, sum(r.bytes)::bigint AS bytes
     FROM reservations r JOIN datasets d ON d.id = r.dataset_id
     WHERE d.extension IS NOT NULL AND r.state = 'active' AND r.expires_at > now()
     GROUP BY r.dataset_id, r.agent_id ORDER BY r.dataset_id`,
  );
  const out = new Map<string, Map<string, number>>();
  for (const r of rows) {
    const perDonor = out.get(r.dataset_id) ?? new Map<string, number>();
    perDonor.set(r.agent_id, Number(r.bytes));
    out.set(r.dataset_id, perDonor);
  }
  return out;
}

/**
 * Space reservations on agents. `reserve` locks the agent row, so concurrent reservations on one
 * agent are serialised: of two racing for the last free bytes exactly one is admitted.
 * Committing moves the bytes into the agent's `used_bytes`; releasing a committed reservation
 * gives them back.
 */
export function createReservationsRepo(pool: pg.Pool) {
  /** Load one reservation FOR UPDATE, checking its owner when given. */
  async function lockOne(tx: Queryable, id: string, owner?: string): Promise<ReservationRow> {
    const { rows } = await tx.query<ReservationRow>(
      `SELECT ${COLUMNS} FROM reservations WHERE id = $1 FOR UPDATE`,
      [id],
    );
    const row = rows[0];
    if (!row || (owner !== undefined && row.agent_id !== owner)) {
      throw new FreeLoaderError('RESERVATION_NOT_FOUND', `no reservation ${id}`);
    }
    return row;
  }

  return {
    /** Admit `bytes` on an agent if quota − used − active reservations allows; else NO_SPACE. */
    async reserve(req: ReservationRequest): Promise<ReservationView> {
      return withTransaction(pool, async (tx) => {
        const { rows } = await tx.query<{
          quota_bytes: number;
          used_bytes: number;
          revoked: boolean;
          bandwidth_only: boolean;
        }>(
          `SELECT quota_bytes, used_bytes, revoked_at IS NOT NULL AS revoked, bandwidth_only
           FROM agents WHERE id = $1 FOR UPDATE`,
          [req.agentId],
        );
        const agent = rows[0];
        if (!agent || agent.revoked) {
          throw new FreeLoaderError('AGENT_NOT_FOUND', `no agent ${req.agentId}`);
        }
        await sweepExpiredReservations(tx, req.agentId);
        const held = await tx.query<{ bytes: number }>(
          `SELECT coalesce(sum(bytes), 0)::bigint AS bytes FROM reservations
           WHERE agent_id = $1 AND state = 'active'`,
          [req.agentId],
        );
        const free = agent.bandwidth_only
          ? 0
          : agent.quota_bytes - agent.used_bytes - held.rows[0]!.bytes;
        if (free < req.bytes) {
          throw new FreeLoaderError(
            'NO_SPACE',
            `agent cannot hold ${formatSize(req.bytes)} (${formatSize(Math.max(0, free))} free)`,
            { freeBytes: Math.max(0, free) },
          );
        }
        const inserted = await tx.query<ReservationRow>(
          `INSERT INTO reservations (agent_id, dataset_id, bytes, expires_at)
           VALUES ($1, $2, $3, now() + make_interval(secs => $4)) RETURNING ${COLUMNS}`,
          [req.agentId, req.datasetId ?? null, req.bytes, req.ttlSeconds ?? RESERVATION_TTL_S],
        );
        return toView(inserted.rows[0]!);
      });
    },

    /**
     * Admit every donor's share of an import in one transaction, all or nothing: the donors'
     * rows are locked in id order (as `releaseDataset` does, so the two never deadlock), their
     * lapsed reservations swept, their room checked together, and the reservations inserted by
     * one multi-row statement — a constant number of round trips however many donors. NO_SPACE
     * (naming the first donor short of room) or AGENT_NOT_FOUND leaves nothing reserved.
     */
    async reserveMany(
      shares: ReadonlyMap<string, number>,
      opts: { datasetId?: string; ttlSeconds?: number } = {},
    ): Promise<void> {
      if (shares.size === 0) return;
      const ids = [...shares.keys()];
      await withTransaction(pool, async (tx) => {
        const { rows: agents } = await tx.query<{
          id: string;
          quota_bytes: number;
          used_bytes: number;
          bandwidth_only: boolean;
        }>(
          `SELECT id::text, quota_bytes, used_bytes, bandwidth_only FROM agents
           WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL ORDER BY id FOR UPDATE`,
          [ids],
        );
        const found = new Map(agents.map((a) => [a.id, a]));
        const missing = ids.find((id) => !found.has(id));
        if (missing) throw new FreeLoaderError('AGENT_NOT_FOUND', `no agent ${missing}`);
        await tx.query(
          `UPDATE reservations SET state = 'expired', updated_at = now()
           WHERE state = 'active' AND expires_at <= now() AND agent_id = ANY($1::uuid[])`,
          [ids],
        );
        const { rows: held } = await tx.query<{ agent_id: string; bytes: number }>(
          `SELECT agent_id::text, sum(bytes)::bigint AS bytes FROM reservations
           WHERE agent_id = ANY($1::uuid[]) AND state = 'active' GROUP BY agent_id`,
          [ids],
        );
        const heldOf = new Map(held.map((h) => [h.agent_id, Number(h.bytes)]));
        for (const [id, bytes] of shares) {
          const a = found.get(id)!;
          const free = a.bandwidth_only ? 0 : a.quota_bytes - a.used_bytes - (heldOf.get(id) ?? 0);
          if (free < bytes) {
            throw new FreeLoaderError(
              'NO_SPACE',
              `agent ${id} cannot hold ${formatSize(bytes)} (${formatSize(Math.max(0, free))} free)`,
              { agentId: id, freeBytes: Math.max(0, free) },
            );
          }
        }
        await tx.query(
          `INSERT INTO reservations (agent_id, dataset_id, bytes, expires_at)
           SELECT w.agent_id, $3::uuid, w.bytes, now() + make_interval(secs => $4::int)
           FROM unnest($1::uuid[], $2::bigint[]) AS w(agent_id, bytes)`,
          [ids, [...shares.values()], opts.datasetId ?? null, opts.ttlSeconds ?? RESERVATION_TTL_S],
        );
      });
    },

    /**
     * Turn an active reservation into used space. Idempotent once committed; RESERVATION_EXPIRED
     * when it lapsed first, CONFLICT when it was released. `owner` restricts to one agent's.
     */
    async commit(id: string, owner?: string): Promise<ReservationView> {
      const outcome = await withTransaction(pool, async (tx) => {
        const row = await lockOne(tx, id, owner);
        if (row.state === 'committed') return toView(row);
        if (row.state === 'active' && !row.lapsed) {
          await tx.query('UPDATE agents SET used_bytes = used_bytes + $2 WHERE id = $1', [
            row.agent_id,
            row.bytes,
          ]);
          const { rows } = await tx.query<ReservationRow>(
            `UPDATE reservations SET state = 'committed', updated_at = now() WHERE id = $1
             RETURNING ${COLUMNS}`,
            [id],
          );
          return toView(rows[0]!);
        }
        if (row.state === 'active') {
          await tx.query(
            `UPDATE reservations SET state = 'expired', updated_at = now() WHERE id = $1`,
            [id],
          );
        }
        return row.state === 'released' ? 'released' : 'expired';
      });
      if (outcome === 'released') {
        throw new FreeLoaderError('CONFLICT', `reservation ${id} was released`);
      }
      if (outcome === 'expired') {
        throw new FreeLoaderError('RESERVATION_EXPIRED', `reservation ${id} expired before commit`);
      }
      return outcome;
    },

    /** Give the space back (active or committed); idempotent for released/expired ones. */
    async release(id: string, owner?: string): Promise<ReservationView> {
      return withTransaction(pool, async (tx) => {
        const row = await lockOne(tx, id, owner);
        if (row.state === 'released' || row.state === 'expired') return toView(row);
        if (row.state === 'committed') {
          await tx.query(
            'UPDATE agents SET used_bytes = greatest(0, used_bytes - $2) WHERE id = $1',
            [row.agent_id, row.bytes],
          );
        }
        const { rows } = await tx.query<ReservationRow>(
          `UPDATE reservations SET state = 'released', updated_at = now() WHERE id = $1
           RETURNING ${COLUMNS}`,
          [id],
        );
        return toView(rows[0]!);
      });
    },

    /**
     * Release every reservation of a dataset (its deletion): committed bytes go back. With
     * `agentId`, only that donor's (it has deleted its morsels while others still hold theirs).
     */
    async releaseDataset(tx: Queryable, datasetId: string, agentId?: string): Promise<void> {
      // Agents first, in id order, as `reserve` locks the agent before any reservation row.
      await tx.query(
        `SELECT 1 FROM agents WHERE id IN (
           SELECT agent_id FROM reservations
           WHERE dataset_id = $1 AND state IN ('active', 'committed')
             AND ($2::uuid IS NULL OR agent_id = $2))
         ORDER BY id FOR UPDATE`,
        [datasetId, agentId ?? null],
      );
      await tx.query(
        `WITH old AS (
           SELECT id, agent_id, bytes, state FROM reservations
           WHERE dataset_id = $1 AND state IN ('active', 'committed')
             AND ($2::uuid IS NULL OR agent_id = $2) FOR UPDATE),
         released AS (
           UPDATE reservations r SET state = 'released', updated_at = now()
           FROM old WHERE r.id = old.id)
         UPDATE agents a SET used_bytes = greatest(0, a.used_bytes - s.bytes)
         FROM (SELECT agent_id, sum(bytes)::bigint AS bytes FROM old
               WHERE state = 'committed' GROUP BY agent_id) s
         WHERE a.id = s.agent_id`,
        [datasetId, agentId ?? null],
      );
    },

    /**
     * Commit every active reservation of a dataset (its import finished): the bytes become used.
     * Returns how many were committed; expired ones stay expired (the caller fails the dataset).
     */
    async commitDataset(
      tx: Queryable,
      datasetId: string,
    ): Promise<{ committed: number; expired: number }> {
      await tx.query(
        `SELECT 1 FROM agents WHERE id IN (
           SELECT agent_id FROM reservations WHERE dataset_id = $1 AND state = 'active')
         ORDER BY id FOR UPDATE`,
        [datasetId],
      );
      const { rows } = await tx.query<{ committed: number; expired: number }>(
        `WITH due AS (
           SELECT id, agent_id, bytes, expires_at > now() AS alive FROM reservations
           WHERE dataset_id = $1 AND state = 'active' FOR UPDATE),
         done AS (
           UPDATE reservations r
           SET state = CASE WHEN due.alive THEN 'committed' ELSE 'expired' END, updated_at = now()
           FROM due WHERE r.id = due.id),
         used AS (
           UPDATE agents a SET used_bytes = a.used_bytes + s.bytes
           FROM (SELECT agent_id, sum(bytes)::bigint AS bytes FROM due WHERE alive
                 GROUP BY agent_id) s
           WHERE a.id = s.agent_id)
         SELECT count(*) FILTER (WHERE alive)::int AS committed,
                count(*) FILTER (WHERE NOT alive)::int AS expired FROM due`,
        [datasetId],
      );
      return rows[0]!;
    },

    sweepExpired: () => sweepExpiredReservations(pool),
  };
}
export type ReservationsRepo = ReturnType<typeof createReservationsRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    reservationsRepo: ReservationsRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('reservationsRepo', createReservationsRepo(app.pg));
  },
  { name: 'reservations-repo', dependencies: ['postgres'] },
);
