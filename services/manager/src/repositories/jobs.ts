import fp from 'fastify-plugin';
import type pg from 'pg';
import {
  FreeLoaderError,
  JOB_LEASE_MS,
  type JobFinish,
  type JobKind,
  type JobOfKind,
  type JobProgress,
  type JobState,
  type JobView,
  type TransferView,
} from '@freeloader/protocol';
import { announceJob, jobNoticeOrigin } from '../db/job-notices.js';
import type { Queryable } from '../db/pool.js';
import { notifyJobSql } from './job-notice-channel.js';
import { iso } from './rows.js';

/**
 * A row of `jobs`. Its kind and payload are typed together as the job view's are: only
 * {@link enqueueJob} writes them, from the payload the caller built for that kind.
 */
type JobRow = KindAndPayload & JobRowFields;
/** A job's kind with the payload of that kind (one member per kind). */
type KindAndPayload = { [K in JobKind]: Pick<JobOfKind<K>, 'kind' | 'payload'> }[JobKind];
interface JobRowFields {
  id: string;
  state: JobState;
  dataset_id: string | null;
  agent_id: string | null;
  done_bytes: number;
  total_bytes: number;
  rate: number;
  error: string | null;
  attempts: number;
  locked_by: string | null;
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = `id, kind, state, dataset_id, agent_id, payload, done_bytes, total_bytes, rate,
  error, attempts, locked_by, created_at, updated_at`;

export function toJobView(r: JobRow): JobView {
  const fields = {
    id: r.id,
    state: r.state,
    datasetId: r.dataset_id,
    agentId: r.agent_id,
    doneBytes: r.done_bytes,
    totalBytes: r.total_bytes,
    error: r.error,
    attempts: r.attempts,
    createdAt: iso(r.created_at),
    updatedAt: iso(r.updated_at),
  };
  // One case per kind: the compiler checks each payload against its kind's schema type.
  switch (r.kind) {
    case 'import':
      return { ...fields, kind: r.kind, payload: r.payload };
    case 'delete':
      return { ...fields, kind: r.kind, payload: r.payload };
    case 'relocate':
      return { ...fields, kind: r.kind, payload: r.payload };
    case 'repair':
      return { ...fields, kind: r.kind, payload: r.payload };
    case 'patch':
      return { ...fields, kind: r.kind, payload: r.payload };
  }
}

const toTransfer = (r: JobRow): TransferView => ({
  jobId: r.id,
  kind: r.kind,
  state: r.state,
  datasetId: r.dataset_id,
  agentId: r.agent_id,
  doneBytes: r.done_bytes,
  totalBytes: r.total_bytes,
  rate: r.rate,
  etaSeconds: etaSeconds(r.state, r.done_bytes, r.total_bytes, r.rate),
  error: r.error,
  createdAt: iso(r.created_at),
  updatedAt: iso(r.updated_at),
});

/**
 * Time left for a running job at its last reported rate.
 *
 * @example etaSeconds('running', 25, 100, 5) === 15
 */
export function etaSeconds(
  state: string,
  done: number,
  total: number,
  rate: number,
): number | null {
  if (state !== 'running' || !(rate > 0) || total <= done)
    return state === 'running' && total <= done ? 0 : null;
  return Math.ceil((total - done) / rate);
}

/**
 * A job to queue: its payload is typed by its kind, as the agent will read it. (Omitted, it is
 * stored as `{}`: only tests queue bare jobs.)
 */
export type NewJob = {
  [K in JobKind]: { kind: K; payload?: JobOfKind<K>['payload'] } & NewJobFields;
}[JobKind];
interface NewJobFields {
  datasetId?: string | null;
  /** The agent that must run it; omitted or null lets any agent claim it. */
  agentId?: string | null;
  totalBytes?: number;
}

/**
 * Queue a job (on the pool or inside the caller's transaction); its agent's job channel hears of
 * it once the job is committed.
 */
export async function enqueueJob(db: Queryable, job: NewJob): Promise<JobView> {
  // The NOTIFY rides on the INSERT: other managers hear of the job exactly when it commits.
  const { rows } = await db.query<JobRow>(
    `WITH q AS (
       INSERT INTO jobs (kind, dataset_id, agent_id, payload, total_bytes)
       VALUES ($1, $2, $3, $4, $5) RETURNING ${COLUMNS})
     SELECT q.*, ${notifyJobSql('$6', 'q.agent_id')} FROM q`,
    [
      job.kind,
      job.datasetId ?? null,
      job.agentId ?? null,
      job.payload ?? {},
      job.totalBytes ?? 0,
      jobNoticeOrigin(db),
    ],
  );
  announceJob(db, rows[0]!.agent_id);
  return toJobView(rows[0]!);
}

/**
 * Queue many jobs in one statement (an import's one job per donor): one round trip however many
 * donors, inside the caller's transaction when `db` is one.
 */
export async function enqueueJobs(db: Queryable, jobs: readonly NewJob[]): Promise<void> {
  if (jobs.length === 0) return;
  const rows = jobs.map((j) => ({
    kind: j.kind,
    dataset_id: j.datasetId ?? null,
    agent_id: j.agentId ?? null,
    payload: j.payload ?? {},
    total_bytes: j.totalBytes ?? 0,
  }));
  // One NOTIFY per donor, on the INSERT, as enqueueJob's.
  await db.query(
    `WITH q AS (
       INSERT INTO jobs (kind, dataset_id, agent_id, payload, total_bytes)
       SELECT j.kind, j.dataset_id, j.agent_id, j.payload, j.total_bytes
       FROM jsonb_to_recordset($1::jsonb)
         AS j(kind text, dataset_id uuid, agent_id uuid, payload jsonb, total_bytes bigint)
       RETURNING agent_id)
     SELECT ${notifyJobSql('$2', 'd.agent_id')} FROM (SELECT DISTINCT agent_id FROM q) d`,
    [JSON.stringify(rows), jobNoticeOrigin(db)],
  );
  // Each donor's job channel is woken once the caller's transaction commits, as enqueueJob's.
  for (const agentId of new Set(rows.map((r) => r.agent_id))) announceJob(db, agentId);
}

/** A running job as the lease sweep sees it. */
export interface LeasedJob {
  id: string;
  kind: JobKind;
  attempts: number;
  leaseExpiresAt: Date | null;
}

/** The job queue agents pull from, and the progress rows the console shows. */
export function createJobsRepo(pool: pg.Pool, leaseMs = JOB_LEASE_MS) {
  /**
   * The caller's running job, or JOB_NOT_FOUND (unknown, or someone else's) / CONFLICT.
   * `lateReport` also accepts a job re-queued when its lease lapsed, as long as nobody else
   * claimed it since: the outcome of that run, reported late, still counts.
   */
  async function ownRunning(id: string, agentId: string, lateReport = false): Promise<JobRow> {
    const { rows } = await pool.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]);
    const row = rows[0];
    if (!row || row.locked_by !== agentId)
      throw new FreeLoaderError('JOB_NOT_FOUND', `no job ${id}`);
    if (row.state !== 'running' && !(lateReport && row.state === 'queued')) {
      throw new FreeLoaderError('CONFLICT', `job ${id} is ${row.state}, not running`);
    }
    return row;
  }

  return {
    enqueue: (job: NewJob) => enqueueJob(pool, job),

    async get(id: string): Promise<JobView | null> {
      const { rows } = await pool.query<JobRow>(`SELECT ${COLUMNS} FROM jobs WHERE id = $1`, [id]);
      return rows[0] ? toJobView(rows[0]) : null;
    },

    /**
     * Take up to `max` queued jobs meant for this agent (or for anyone), oldest first. Rows
     * another claimer holds are skipped, not waited for, so concurrent claimers never share one.
     * NO KEY UPDATE, the lock the UPDATE takes anyway: FOR UPDATE also clashed with the
     * FOR KEY SHARE of a foreign-key check (units naming a job being written), and skipped a
     * job that was free to claim.
     * `resume` (an agent's first claim after it restarted) also hands back the jobs it was
     * running when it stopped, so a restart loses nothing.
     */
    async claim(
      agentId: string,
      opts: { kinds?: string[]; max?: number; resume?: boolean } = {},
    ): Promise<JobView[]> {
      const { rows } = await pool.query<JobRow>(
        // Sorted in SQL: created_at has microseconds, a JS Date only milliseconds, so jobs
        // enqueued within one millisecond would come back in RETURNING's arbitrary order.
        `WITH claimed AS (
           UPDATE jobs SET state = 'running', agent_id = $1, locked_by = $1,
                  attempts = attempts + 1, updated_at = now(),
                  lease_expires_at = now() + $5 * interval '1 millisecond'
           WHERE id IN (
             SELECT id FROM jobs
             WHERE ((state = 'queued' AND (agent_id = $1 OR agent_id IS NULL))
                    OR ($4 AND state = 'running' AND locked_by = $1))
               AND ($2::text[] IS NULL OR kind = ANY($2::text[]))
             ORDER BY created_at
             LIMIT $3
             FOR NO KEY UPDATE SKIP LOCKED)
           RETURNING ${COLUMNS})
         SELECT * FROM claimed ORDER BY created_at`,
        [agentId, opts.kinds ?? null, opts.max ?? 1, opts.resume ?? false, leaseMs],
      );
      return rows.map(toJobView);
    },

    /** Whether queued work waits for this agent (asked when its job channel reconnects). */
    async hasPending(agentId: string): Promise<boolean> {
      const { rowCount } = await pool.query(
        `SELECT 1 FROM jobs WHERE state = 'queued' AND (agent_id = $1 OR agent_id IS NULL) LIMIT 1`,
        [agentId],
      );
      return (rowCount ?? 0) > 0;
    },

    /**
     * Extend the leases of the jobs an agent says it runs (its heartbeat); ids that are not its
     * running jobs are ignored. Returns how many were renewed.
     */
    async renewLeases(agentId: string, ids: readonly string[]): Promise<number> {
      if (ids.length === 0) return 0;
      const { rowCount } = await pool.query(
        `UPDATE jobs SET lease_expires_at = now() + $3 * interval '1 millisecond'
         WHERE id = ANY($2::uuid[]) AND locked_by = $1 AND state = 'running'`,
        [agentId, ids, leaseMs],
      );
      return rowCount ?? 0;
    },

    async progress(id: string, agentId: string, p: JobProgress): Promise<TransferView> {
      await ownRunning(id, agentId);
      const { rows } = await pool.query<JobRow>(
        `UPDATE jobs SET done_bytes = $2, rate = coalesce($3, rate), updated_at = now(),
                lease_expires_at = now() + $4 * interval '1 millisecond'
         WHERE id = $1 RETURNING ${COLUMNS}`,
        [id, p.doneBytes, p.rate ?? null, leaseMs],
      );
      return toTransfer(rows[0]!);
    },

    async finish(id: string, agentId: string, f: JobFinish): Promise<JobView> {
      await ownRunning(id, agentId, true);
      const { rows } = await pool.query<JobRow>(
        `UPDATE jobs SET state = $2, error = $3, error_code = $4, result = $5, rate = 0,
                done_bytes = CASE WHEN $2 = 'done' THEN greatest(done_bytes, total_bytes)
                                  ELSE done_bytes END,
                lease_expires_at = NULL, updated_at = now()
         WHERE id = $1 AND state IN ('running', 'queued') AND locked_by = $6
         RETURNING ${COLUMNS}`,
        [id, f.state, f.error ?? null, f.errorCode ?? null, f.result ?? null, agentId],
      );
      if (!rows[0]) throw new FreeLoaderError('CONFLICT', `job ${id} finished concurrently`);
      return toJobView(rows[0]);
    },

    /** Running jobs whose lease lapsed (or that never had one), with the database's clock. */
    async lapsedLeases(limit = 500): Promise<{ now: Date; jobs: LeasedJob[] }> {
      const { rows } = await pool.query<{
        id: string;
        kind: JobKind;
        attempts: number;
        lease_expires_at: Date | null;
        now: Date;
      }>(
        `SELECT id, kind, attempts, lease_expires_at, now() AS now FROM jobs
         WHERE state = 'running' AND (lease_expires_at IS NULL OR lease_expires_at < now())
         ORDER BY lease_expires_at NULLS FIRST LIMIT $1`,
        [limit],
      );
      const now = rows[0]?.now ?? new Date();
      return {
        now,
        jobs: rows.map((r) => ({
          id: r.id,
          kind: r.kind,
          attempts: r.attempts,
          leaseExpiresAt: r.lease_expires_at,
        })),
      };
    },

    /**
     * Put a running job whose lease lapsed back in the queue (for the same agent, which keeps
     * `locked_by` so its late report still counts). Null when it was renewed or finished since.
     */
    async requeueLapsed(id: string): Promise<JobView | null> {
      // Queued again is queued: announced like a new job (it once waited for the 60 s check).
      const { rows } = await pool.query<JobRow>(
        `WITH q AS (
           UPDATE jobs SET state = 'queued', rate = 0, lease_expires_at = NULL, updated_at = now()
           WHERE id = $1 AND state = 'running'
             AND (lease_expires_at IS NULL OR lease_expires_at < now())
           RETURNING ${COLUMNS})
         SELECT q.*, ${notifyJobSql('$2', 'q.agent_id')} FROM q`,
        [id, jobNoticeOrigin(pool)],
      );
      if (!rows[0]) return null;
      announceJob(pool, rows[0].agent_id);
      return toJobView(rows[0]);
    },

    /** Fail a running job whose lease lapsed; null when it was renewed or finished since. */
    async failLapsed(id: string, error: string): Promise<JobView | null> {
      const { rows } = await pool.query<JobRow>(
        `UPDATE jobs SET state = 'failed', error = $2, error_code = 'TIMEOUT', rate = 0,
                lease_expires_at = NULL, updated_at = now()
         WHERE id = $1 AND state = 'running'
           AND (lease_expires_at IS NULL OR lease_expires_at < now())
         RETURNING ${COLUMNS}`,
        [id, error],
      );
      return rows[0] ? toJobView(rows[0]) : null;
    },

    /** Delete up to `batch` jobs finished more than `retentionMs` ago; returns how many. */
    async pruneFinished(retentionMs: number, batch = 1_000): Promise<number> {
      const { rowCount } = await pool.query(
        `DELETE FROM jobs WHERE id IN (
           SELECT id FROM jobs
           WHERE state IN ('done', 'failed', 'cancelled')
             AND updated_at < now() - $1 * interval '1 millisecond'
           LIMIT $2)`,
        [retentionMs, batch],
      );
      return rowCount ?? 0;
    },

    /** Jobs of `kind` on a dataset not yet finished. */
    async unfinished(datasetId: string, kind: JobKind): Promise<number> {
      const { rows } = await pool.query<{ n: number }>(
        `SELECT count(*) AS n FROM jobs
         WHERE dataset_id = $1 AND kind = $2 AND state IN ('queued', 'running')`,
        [datasetId, kind],
      );
      return rows[0]!.n;
    },

    /** Most recently updated jobs as progress rows. */
    async transfers(
      q: { state?: JobState; datasetId?: string; limit?: number } = {},
    ): Promise<TransferView[]> {
      const { rows } = await pool.query<JobRow>(
        `SELECT ${COLUMNS} FROM jobs
         WHERE ($1::text IS NULL OR state = $1) AND ($2::uuid IS NULL OR dataset_id = $2)
         ORDER BY updated_at DESC LIMIT $3`,
        [q.state ?? null, q.datasetId ?? null, q.limit ?? 200],
      );
      return rows.map(toTransfer);
    },

    toTransfer,
  };
}
export type JobsRepo = ReturnType<typeof createJobsRepo>;

declare module 'fastify' {
  interface FastifyInstance {
    jobsRepo: JobsRepo;
  }
}

export default fp(
  async (app) => {
    app.decorate('jobsRepo', createJobsRepo(app.pg, app.config.jobLeaseMs));
  },
  { name: 'jobs-repo', dependencies: ['postgres'] },
);
