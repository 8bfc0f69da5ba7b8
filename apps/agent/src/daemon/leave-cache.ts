import type { Logger } from 'pino';
import { FreeLoaderError, isFreeLoaderError, type LeaveProgress } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import type { RetiringStore } from '../store/retiring-store.js';

/** How often a leaving agent asks the manager how far its leave has come (milliseconds). */
export const LEAVE_POLL_MS = 1_000;

export interface LeaveCacheDeps {
  manager: ManagerClient;
  store: RetiringStore;
  log: Logger;
  /** True once the daemon stops: the leave ends unfinished. */
  stopping: () => boolean;
  /** Hears how much is left at every poll, and the release at the end. */
  onProgress: (p: LeaveProgress) => void;
}

/**
 * Leave the cache gracefully: the manager re-creates this donor's copies elsewhere (reading them
 * from here while it works), then releases it. Once released, the local store is emptied
 * (nothing here is placed any more); a daemon stopped before that throws UNAVAILABLE and keeps
 * its store.
 *
 * @example await leaveCache({ manager, store, log, stopping: () => false, onProgress: console.log })
 */
export async function leaveCache(deps: LeaveCacheDeps): Promise<void> {
  const { manager, store, log } = deps;
  let p = await manager.request<LeaveProgress>('POST', '/agents/me/leave', {});
  while (!p.released && !deps.stopping()) {
    deps.onProgress(p);
    await new Promise((r) => setTimeout(r, LEAVE_POLL_MS));
    try {
      p = await manager.request<LeaveProgress>('GET', '/agents/me/leave');
    } catch (e) {
      // Released between two polls: the manager no longer knows this agent's credential.
      if (isFreeLoaderError(e) && e.code === 'AGENT_REVOKED') break;
      log.warn(
        { err: e instanceof Error ? e.message : String(e) },
        'leave progress unavailable; retrying',
      );
    }
  }
  if (deps.stopping()) throw new FreeLoaderError('UNAVAILABLE', 'agent stopped before it left');
  deps.onProgress({ ...p, released: true, remainingMorsels: 0, remainingBytes: 0 });
  for (const d of await store.list()) await store.free(d.datasetId);
  log.info('left the cache: released by the manager, store emptied');
}
