import type { Logger } from 'pino';
import type { ManagerClient } from '../manager-client.js';
import type { MorselStore } from '../store/store.js';

/** What the manager expects an agent to hold (`GET /api/v1/agents/me/datasets`). */
export interface Holdings {
  datasets: { id: string; state: string }[];
}

/**
 * Startup recovery: morsels of datasets the manager no longer knows (deleted while we were
 * offline, or a failed import) are freed; datasets it still expects stay. The manager's view wins
 * because it is the one that hands out read capabilities.
 */
export async function reconcileStore(
  store: MorselStore,
  manager: ManagerClient,
  log: Logger,
): Promise<{ freed: string[] }> {
  const holdings = await manager.request<Holdings>('GET', '/agents/me/datasets');
  const keep = new Set(
    holdings.datasets
      .filter((d) => d.state !== 'failed' && d.state !== 'deleting')
      .map((d) => d.id),
  );
  const freed: string[] = [];
  for (const local of await store.list()) {
    if (keep.has(local.datasetId)) continue;
    await store.free(local.datasetId);
    freed.push(local.datasetId);
  }
  if (freed.length > 0) log.info({ freed }, 'freed datasets the manager no longer expects here');
  return { freed };
}
