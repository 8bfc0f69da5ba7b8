import type { Heartbeat } from '@freeloader/protocol';

/**
 * The heartbeat to keep for an agent: `next`, but with the quota of `before` when `before`
 * carries a higher quota version. A heartbeat the agent built just before a quota change can
 * arrive after the change (or after a newer heartbeat); its quota is then older than the one
 * already known. Heartbeats without a version (old agents) are taken as sent.
 *
 * @example newerQuota({ ...hb, quotaBytes: 20, quotaVersion: 2 }, { ...hb, quotaBytes: 0, quotaVersion: 1 })
 *          // → { ...hb, quotaBytes: 20, quotaVersion: 2 }
 */
export function newerQuota(before: Heartbeat | undefined, next: Heartbeat): Heartbeat {
  const known = before?.quotaVersion;
  if (known === undefined || next.quotaVersion === undefined || next.quotaVersion >= known) {
    return next;
  }
  return { ...next, quotaBytes: before!.quotaBytes, quotaVersion: known };
}
