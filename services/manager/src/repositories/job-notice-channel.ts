import type pg from 'pg';
import { ANY_AGENT } from '../db/job-notices.js';

/**
 * The NOTIFY channel on which managers of one database tell each other that jobs were queued
 * (payload `<origin manager id> <agent id or *>`, see parseJobNotice).
 */
export const JOBS_CHANNEL = 'freeloader_jobs';

/**
 * A select-list item that NOTIFYs the job channel for the row's `agentColumn`, with the origin
 * in parameter `originParam`: written into the statement that queues the job, so the notice is
 * delivered at that statement's COMMIT and never for a rolled-back job, at no extra round trip.
 *
 * @example `WITH q AS (INSERT … RETURNING *) SELECT q.*, ${notifyJobSql('$6', 'q.agent_id')} FROM q`
 */
export function notifyJobSql(originParam: string, agentColumn: string): string {
  return `pg_notify('${JOBS_CHANNEL}', ${originParam} || ' ' || coalesce(${agentColumn}::text, '${ANY_AGENT}')) AS notified`;
}

/** Make `client`'s session receive the job channel's notifications. */
export async function listenJobNotices(client: pg.Client): Promise<void> {
  await client.query(`LISTEN ${JOBS_CHANNEL}`);
}
