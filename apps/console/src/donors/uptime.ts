import type { HistoryResponse } from '@freeloader/protocol';

/**
 * The fraction of sampled time a donor was up: liveness samples (1 up, 0 down; downsampled
 * buckets are averages) weighted by the time each covers, so a 10-minute bucket counts as much
 * as the twenty 30-second samples it replaced.
 *
 * @example uptimeFraction([{ value: 1, resolutionS: 0 }, { value: 0, resolutionS: 0 }], 30) // 0.5
 */
export function uptimeFraction(
  points: ReadonlyArray<{ value: number; resolutionS: number }>,
  sampleIntervalS: number,
): number | null {
  let weighted = 0;
  let total = 0;
  for (const p of points) {
    const w = p.resolutionS > 0 ? p.resolutionS : sampleIntervalS;
    weighted += p.value * w;
    total += w;
  }
  return total > 0 ? weighted / total : null;
}

/** Uptime of every donor in a `donor_up` history, by donor id. */
export function uptimeByDonor(res: HistoryResponse | undefined): Map<string, number | null> {
  return new Map(
    (res?.subjects ?? []).flatMap((s) =>
      s.subject ? [[s.subject, uptimeFraction(s.points, res!.sampleIntervalS)] as const] : [],
    ),
  );
}
