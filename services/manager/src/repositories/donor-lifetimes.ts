import type { Queryable } from '../db/pool.js';

/** What the ledger knows of storage donors' lives, for the availability model's rates. */
export interface DonorLifetimes {
  /** Storage donors enrolled and not revoked. */
  donors: number;
  /** Seconds every storage donor ever enrolled has been enrolled (until now or its revocation). */
  enrolledSeconds: number;
  /** Storage donors revoked (left or removed for good): the permanent failures seen. */
  departures: number;
  /** Bytes the ledger counts on the unrevoked storage donors, all copies. */
  usedBytes: number;
}

/** Enrolment time, departures and used bytes of storage donors (one row). */
export async function donorLifetimes(db: Queryable): Promise<DonorLifetimes> {
  const { rows } = await db.query<{
    donors: number;
    enrolled_seconds: number;
    departures: number;
    used_bytes: string;
  }>(
    `SELECT count(*) FILTER (WHERE revoked_at IS NULL)::int AS donors,
            coalesce(sum(extract(epoch FROM coalesce(revoked_at, now()) - enrolled_at)), 0)::float8
              AS enrolled_seconds,
            count(*) FILTER (WHERE revoked_at IS NOT NULL)::int AS departures,
            coalesce(sum(used_bytes) FILTER (WHERE revoked_at IS NULL), 0)::text AS used_bytes
     FROM agents WHERE NOT bandwidth_only`,
  );
  const r = rows[0]!;
  return {
    donors: r.donors,
    enrolledSeconds: r.enrolled_seconds,
    departures: r.departures,
    usedBytes: Number(r.used_bytes),
  };
}
