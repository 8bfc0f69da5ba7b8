/**
 * Advisory lock keys of the periodic work that must run on exactly one manager per database
 * (each a readable 4-letter tag packed into an int, so `pg_locks` shows who holds what). Keys
 * are per database: managers of different databases never contend.
 */
export const LOCK_KEYS = {
  /** 'FLRP': repair scheduling (repair/scheduler.ts, its own session: repositories/repair-lock.ts). */
  repair: 0x464c5250,
  /** 'FLDD': failing the imports of dead donors (imports/dead-donor-watch.ts). */
  deadDonors: 0x464c4444,
  /** 'FLJL': job lease expiry (jobs/job-sweeps.ts). */
  jobLeases: 0x464c4a4c,
  /** 'FLJR': pruning finished jobs past their retention (jobs/job-sweeps.ts). */
  jobRetention: 0x464c4a52,
  /** 'FLRV': marking lapsed reservations expired (soft-state-plugin.ts). */
  reservations: 0x464c5256,
  /** 'FLEV': the prefix cache's watermark eviction sweep (prefix/plugin.ts). */
  eviction: 0x464c4556,
  /** 'FLHS': the history sampler, which writes shared rows (history/plugin.ts). */
  history: 0x464c4853,
} as const;

export type LockName = keyof typeof LOCK_KEYS;
