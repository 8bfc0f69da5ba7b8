import type { ManagerClient } from '../manager-client.js';
import type { DonorRate } from './dataset-reader.js';

/**
 * Tell the manager what this client saw: bytes/s per donor (placement will predict from it) and
 * which donors failed (so it can check on them). Best effort: a read never fails for this.
 */
export async function reportReadOutcome(
  manager: ManagerClient,
  datasetId: string,
  rates: Map<string, DonorRate>,
  failures: { donor: string; error: string }[],
): Promise<void> {
  const samples = [...rates]
    .filter(([, r]) => r.bytes > 0 && r.busyMs > 0)
    .map(([agentId, r]) => ({ agentId, bytes: r.bytes, seconds: r.busyMs / 1000 }));
  if (samples.length === 0 && failures.length === 0) return;
  await manager.request('POST', '/rates', { datasetId, samples, failures });
}
