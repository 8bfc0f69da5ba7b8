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

/** A morsel a donor sent with a bad hash. */
export interface BadCopy {
  donor: string;
  morsel: number;
}

/** Most bad copies one report carries (the manager's ClientFaultReport limit). */
const BAD_COPIES_PER_REPORT = 64;

/**
 * Tell the manager which donors sent which morsels with a bad hash, so it marks those copies
 * unusable and repair replaces them (`POST /datasets/:id/faults`). Best effort, like the rates.
 */
export async function reportBadCopies(
  manager: ManagerClient,
  datasetId: string,
  bad: readonly BadCopy[],
): Promise<void> {
  for (let i = 0; i < bad.length; i += BAD_COPIES_PER_REPORT) {
    const faults = bad.slice(i, i + BAD_COPIES_PER_REPORT);
    await manager.request('POST', `/datasets/${datasetId}/faults`, { faults });
  }
}
