import type { JobView } from '@freeloader/protocol';
import type { Harness } from './harness.js';

/**
 * Play the donors' side of delete jobs while `until` is pending, as their daemons would: claim
 * every delete job queued for them and report it done. Returns what `until` resolves to.
 *
 * @example const res = await runDeleteJobs(h, donors, importOf(uri));
 */
export async function runDeleteJobs<T>(
  h: Harness,
  donors: ReadonlyArray<{ auth: string }>,
  until: Promise<T>,
): Promise<T> {
  let settled = false;
  void until.finally(() => (settled = true)).catch(() => undefined);
  while (!settled) {
    for (const who of donors) {
      const res = await h.call({
        method: 'POST',
        url: '/api/v1/jobs/claim',
        headers: { authorization: who.auth },
        payload: { kinds: ['delete'] },
      });
      for (const job of res.json<JobView[]>()) {
        await h.call({
          method: 'POST',
          url: `/api/v1/jobs/${job.id}/finish`,
          headers: { authorization: who.auth },
          payload: { state: 'done' },
        });
      }
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return until;
}
