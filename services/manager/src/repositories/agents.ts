import fp from 'fastify-plugin';
import type pg from 'pg';
import type { EnrollRequest, Heartbeat } from '@freeloader/protocol';
import { randomSecret, sha256 } from '../db/stored-secrets.js';
import { joinTokenHash, joinTokenRefusal, SPEND_JOIN_TOKEN } from './join-tokens.js';

/** An agent as stored, with the bytes its active reservations hold. */
export interface AgentRecord {
  id: string;
  name: string;
  url: string;
  bandwidthOnly: boolean;
  quotaBytes: number;
  /** Bytes of committed reservations: the ledger admission control trusts. */
  usedBytes: number;
  /** Bytes the agent itself last reported using (display). */
  reportedUsedBytes: number;
  freeBytes: number;
  servingRate: number;
  throttle: string | null;
  lastSeenAt: Date | null;
  enrolledAt: Date;
  revokedAt: Date | null;
  /** Silent past REPAIR_AFTER_MS: its copies are being re-created elsewhere. */
  lostAt: Date | null;
  /** Asked to leave: its copies move first, then it is released. */
  leavingAt: Date | null;
  reservedBytes: number;
}

interface AgentRow {
  id: string;
  name: string;
  url: string;
  bandwidth_only: boolean;
  quota_bytes: number;
  used_bytes: number;
  reported_used_bytes: number;
  free_bytes: number;
  serving_rate: number;
  throttle: string | null;
  last_seen_at: Date | null;
  enrolled_at: Date;
  revoked_at: Date | null;
  lost_at: Date | null;
  leaving_at: Date | null;
  reserved_bytes: number;
}

const SELECT_AGENTS = `
  SELECT a.id, a.name, a.url, a.bandwidth_only, a.quota_bytes, a.used_bytes,
         a.reported_used_bytes, a.free_bytes, a.serving_rate, a.throttle, a.last_seen_at,
         a.enrolled_at, a.revoked_at, a.lost_at, a.leaving_at,
         coalesce((SELECT sum(r.bytes) FROM reservations r
                   WHERE r.agent_id = a.id AND r.state = 'active' AND r.expires_at > now()),
                  0)::bigint AS reserved_bytes
  FROM agents a`;

const toRecord = (r: AgentRow): AgentRecord => ({
  id: r.id,
  name: r.name,
  url: r.url,
  bandwidthOnly: r.bandwidth_only,
  quotaBytes: r.quota_bytes,
  usedBytes: r.used_bytes,
  reportedUsedBytes: r.reported_used_bytes,
  freeBytes: r.free_bytes,
  servingRate: r.serving_rate,
  throttle: r.throttle,
  lastSeenAt: r.last_seen_at,
  enrolledAt: r.enrolled_at,
  revokedAt: r.revoked_at,
  lostAt: r.lost_at,
  leavingAt: r.leaving_at,
  reservedBytes: r.reserved_bytes,
});

/** A donor as a read map names it ({@link createAgentsRepo} `endpointsOf`). */
export interface AgentEndpoint {
  id: string;
  url: string;
  throttle: string | null;
  revoked: boolean;
}

/** One agent's latest sighting, as written to the agents table by the periodic flush. */
export interface SoftStateRow {
  agentId: string;
  seenAt: Date;
  heartbeat: Heartbeat | undefined;
}

/** Agents: enrollment, credential checks, revocation and the soft-state flush. */
export function createAgentsRepo(pool: pg.Pool) {
  return {
    /**
     * Spend a join token and register the agent in one statement (atomic: both or neither).
     * The credential is returned once; only its SHA-256 is stored. One statement, not a
     * transaction of five (BEGIN, lock, update, insert, COMMIT): 5.98 ms of manager and
     * PostgreSQL CPU per enrollment on the loaded bench machine (manager-scale), most of it
     * round trips, and the token's row stayed locked across all of them.
     */
    async enroll(req: EnrollRequest): Promise<{ agentId: string; credential: string }> {
      const credential = randomSecret(32);
      const tokenHash = joinTokenHash(req.token);
      const { rows } = await pool.query<{ id: string }>(
        `WITH spent AS (${SPEND_JOIN_TOKEN})
         INSERT INTO agents (name, url, credential_hash, bandwidth_only, quota_bytes,
                             join_token_id)
         SELECT $2, $3, $4, $5, $6, spent.id FROM spent RETURNING id`,
        [
          tokenHash,
          req.name,
          req.url,
          sha256(credential),
          req.bandwidthOnly ?? false,
          req.quotaBytes,
        ],
      );
      const agentId = rows[0]?.id;
      if (!agentId) throw await joinTokenRefusal(pool, tokenHash);
      return { agentId, credential };
    },

    /**
     * An agent's stored credential digest and whether it was revoked; null when unknown. The
     * credential cache checks presented credentials against it.
     */
    async credentialOf(agentId: string): Promise<{ digest: Buffer; revoked: boolean } | null> {
      const { rows } = await pool.query<{ credential_hash: Buffer; revoked_at: Date | null }>(
        'SELECT credential_hash, revoked_at FROM agents WHERE id = $1',
        [agentId],
      );
      const row = rows[0];
      return row ? { digest: row.credential_hash, revoked: row.revoked_at !== null } : null;
    },

    /** Every agent's credential digest (the cache loads them at start: no lookup storm). */
    async allCredentials(): Promise<({ id: string } & { digest: Buffer; revoked: boolean })[]> {
      const { rows } = await pool.query<{
        id: string;
        credential_hash: Buffer;
        revoked_at: Date | null;
      }>('SELECT id, credential_hash, revoked_at FROM agents');
      return rows.map((r) => ({
        id: r.id,
        digest: r.credential_hash,
        revoked: r.revoked_at !== null,
      }));
    },

    /** Agents revoked within the last `withinMs` (the credential cache forgets them). */
    async revokedWithin(withinMs: number): Promise<string[]> {
      const { rows } = await pool.query<{ id: string }>(
        `SELECT id FROM agents WHERE revoked_at > now() - $1 * interval '1 millisecond'`,
        [withinMs],
      );
      return rows.map((r) => r.id);
    },

    async get(id: string): Promise<AgentRecord | null> {
      const { rows } = await pool.query<AgentRow>(`${SELECT_AGENTS} WHERE a.id = $1`, [id]);
      return rows[0] ? toRecord(rows[0]) : null;
    },

    async list(): Promise<AgentRecord[]> {
      const { rows } = await pool.query<AgentRow>(`${SELECT_AGENTS} ORDER BY a.enrolled_at`);
      return rows.map(toRecord);
    },

    /** Several agents by id (e.g. the donors of a map); unknown ids are skipped. */
    async getMany(ids: readonly string[]): Promise<AgentRecord[]> {
      if (ids.length === 0) return [];
      const { rows } = await pool.query<AgentRow>(`${SELECT_AGENTS} WHERE a.id = ANY($1::uuid[])`, [
        ids,
      ]);
      return rows.map(toRecord);
    },

    /**
     * What a read map says of each donor: address, stored throttle state, revocation. Not the
     * whole record: its reserved bytes are a subquery per agent and its five timestamps are
     * parsed per row, for nothing a map shows (912 donors of a 1 TiB map).
     *
     * @example await agentsRepo.endpointsOf([id]) // → [{ id, url, throttle: null, revokedAt: null }]
     */
    async endpointsOf(ids: readonly string[]): Promise<AgentEndpoint[]> {
      if (ids.length === 0) return [];
      const { rows } = await pool.query<AgentEndpoint>(
        `SELECT id, url, throttle, revoked_at IS NOT NULL AS revoked FROM agents
         WHERE id = ANY($1::uuid[])`,
        [ids],
      );
      return rows;
    },

    /** Revoke an agent: its credential stops working. False when there is no such agent. */
    async revoke(id: string): Promise<boolean> {
      const { rowCount } = await pool.query(
        'UPDATE agents SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1',
        [id],
      );
      return rowCount === 1;
    },

    /**
     * Write soft state in one statement: wall-clock last seen, the latest heartbeat numbers, and
     * what an agent's first heartbeat (or a change) brings: its URL and join-time probe (placement
     * reads the probe here when the heartbeat is not in memory). These were two writes of their
     * own in the heartbeat's request, one agent at a time through the pool: 10,000 agents coming
     * up queued minutes of them behind each other; batched here they cost one statement a flush.
     */
    async flushSoftState(rows: readonly SoftStateRow[]): Promise<void> {
      if (rows.length === 0) return;
      const hb = rows.map((r) => r.heartbeat);
      const probe = hb.map((h) => h?.diagnostics);
      // Rows locked in id order first, as every multi-agent transaction (reserve, trim,
      // repair) locks them: an UPDATE alone takes them in whatever order its join yields,
      // and deadlocked with a prefix cut under load (500 on PUT /datasets/:id/cached).
      // A probe's columns are written together when the heartbeat carries one (diskCached may
      // be absent from it: null then, not the old value).
      await pool.query(
        `WITH locked AS (
           SELECT id FROM agents WHERE id = ANY($1::uuid[]) AND revoked_at IS NULL
           ORDER BY id FOR UPDATE
         )
         UPDATE agents a SET
           last_seen_at = v.seen_at,
           -- A heartbeat built before the agent's last quota change keeps its hands off it.
           quota_bytes = CASE WHEN v.quota IS NULL OR v.qver < a.quota_version THEN a.quota_bytes
                              ELSE v.quota END,
           quota_version = greatest(a.quota_version, coalesce(v.qver, 0)),
           reported_used_bytes = coalesce(v.used, a.reported_used_bytes),
           free_bytes = coalesce(v.free, a.free_bytes),
           serving_rate = coalesce(v.rate, a.serving_rate),
           throttle = coalesce(v.throttle, a.throttle),
           url = coalesce(v.url, a.url),
           disk_read_rate = CASE WHEN v.diag_at IS NULL THEN a.disk_read_rate ELSE v.disk END,
           disk_read_cached = CASE WHEN v.diag_at IS NULL THEN a.disk_read_cached ELSE v.cached END,
           download_rate = CASE WHEN v.diag_at IS NULL THEN a.download_rate ELSE v.down END,
           upload_rate = CASE WHEN v.diag_at IS NULL THEN a.upload_rate ELSE v.up END,
           diagnosed_at = coalesce(v.diag_at, a.diagnosed_at)
         FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[], $4::bigint[], $5::bigint[],
                     $6::float8[], $7::text[], $8::text[], $9::float8[], $10::boolean[],
                     $11::float8[], $12::float8[], $13::timestamptz[], $14::bigint[])
                AS v(id, seen_at, quota, used, free, rate, throttle, url, disk, cached, down, up,
                     diag_at, qver),
              locked
         WHERE a.id = v.id AND a.id = locked.id`,
        [
          rows.map((r) => r.agentId),
          rows.map((r) => r.seenAt),
          hb.map((h) => h?.quotaBytes ?? null),
          hb.map((h) => h?.usedBytes ?? null),
          hb.map((h) => h?.freeBytes ?? null),
          hb.map((h) => h?.servingRate ?? null),
          hb.map((h) => h?.throttle ?? null),
          hb.map((h) => h?.url ?? null),
          probe.map((d) => d?.diskReadRate ?? null),
          probe.map((d) => d?.diskCached ?? null),
          probe.map((d) => d?.downloadRate ?? null),
          probe.map((d) => d?.uploadRate ?? null),
          probe.map((d) => d?.measuredAt ?? null),
          hb.map((h) => h?.quotaVersion ?? null),
        ],
      );
    },
  };
}
export type AgentsRepo = ReturnType<typeof createAgentsRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    agentsRepo: AgentsRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('agentsRepo', createAgentsRepo(app.pg));
  },
  { name: 'agents-repo', dependencies: ['postgres'] },
);
