import { join } from 'node:path';
import { FreeLoaderError, type QuotaChangeResponse } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import { checkQuotaFits } from '../store/disk-space.js';
import type { MorselStore } from '../store/store.js';
import type { QuotaVersion } from './quota-version.js';
import type { RelocationTracker } from './relocation-tracker.js';

export interface QuotaDeps {
  dir: string;
  store: MorselStore;
  manager: ManagerClient;
  tracker: RelocationTracker;
  /** Bumped with the store's quota, so heartbeats from then on carry the new version. */
  quotaVersion: QuotaVersion;
  bandwidthOnly: boolean;
  /**
   * Persist the new quota in the agent's settings file, so a restart keeps it (the daemon owns
   * that file; this layer only asks for the write).
   */
  rememberQuota: (quotaBytes: number) => Promise<void>;
}

/**
 * Change the donated space. The store takes the new quota at once (a cut below usage only
 * stops new puts), the settings file remembers it, and the manager is told: it raises the
 * donor's share immediately, or plans relocate jobs / evictions for whatever no longer fits.
 *
 * @example await changeQuota(deps, 8 * GiB) // → the manager's plan ({ relocating: [...] , ... })
 */
export async function changeQuota(
  deps: QuotaDeps,
  quotaBytes: number,
): Promise<QuotaChangeResponse> {
  if (deps.bandwidthOnly) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'a bandwidth-only agent donates no disk');
  }
  if (!Number.isSafeInteger(quotaBytes) || quotaBytes < 0) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'quota must be a whole number of bytes');
  }
  const { usedBytes, quotaBytes: before } = deps.store.usage();
  if (quotaBytes > before) await checkQuotaFits(join(deps.dir, 'store'), quotaBytes, usedBytes);
  // Together, with no await between: a heartbeat carries either both the old quota and version
  // or both new ones.
  deps.store.setQuota(quotaBytes);
  const quotaVersion = deps.quotaVersion.bump();
  await deps.rememberQuota(quotaBytes);
  const res = await deps.manager.request<QuotaChangeResponse>('POST', '/agents/me/quota', {
    quotaBytes,
    quotaVersion,
  });
  deps.tracker.planned(res);
  return res;
}
