import { prefixBytes } from '@freeloader/striping';
import type { SourceStatsView } from '@freeloader/protocol';

/**
 * The model prefix (seed 002 §3.1) of a dataset from what the registry knows of its source and
 * the client's R_client, in whole morsels. With nothing known about the source its latency
 * cannot be hidden, so the whole dataset is the answer; the import rate (1-morsel requests) is
 * a floor for R_patch until a patch has been measured.
 *
 * @example prefixFromStats(100 * MiB, MiB, { startupLatencyS: 0, patchRate: 50e6, … }, 100e6) // → 50 MiB
 */
export function prefixFromStats(
  sizeBytes: number,
  morselSize: number,
  stats: Pick<SourceStatsView, 'startupLatencyS' | 'patchRate' | 'importRate'> | null,
  clientRate: number,
): number {
  const patchRate = stats?.patchRate ?? stats?.importRate ?? 0;
  if (!stats || !(patchRate > 0)) return sizeBytes;
  return prefixBytes(
    { sizeBytes, clientRate, patchRate, startupLatencyS: stats.startupLatencyS ?? 0 },
    morselSize,
  );
}
