import { UNKNOWN_SAMPLE, type MonitorSample } from './sample.js';
import type { SystemFigures } from './system-probe.js';

/**
 * Machine figures with the agent's own share taken out: its CPU time, the bytes it sent (served
 * or pushed: read from disk, sent on the network) and the bytes it pulled in (imports, patch
 * downloads: received, written to disk). Own bytes are subtracted at most down to zero — an
 * agent serving over loopback shows in neither figure, and that must not hide native load.
 * Owner idle time is not part of the figures; the caller adds it.
 *
 * @example nativeSample({ ...figures, netTxBps: 50e6 }, 40e6).netBps // → rx + 10e6
 */
export function nativeSample(
  f: SystemFigures | undefined,
  servedBps: number,
  receivedBps = 0,
): Omit<MonitorSample, 'ownerIdleMs'> {
  if (!f) return { ...UNKNOWN_SAMPLE, servedBps, receivedBps };
  const minus = (v: number | null, own: number): number | null =>
    v === null ? null : v - Math.min(v, own);
  const minusOwn = (v: number | null): number | null => minus(v, servedBps);
  const minusIn = (v: number | null): number | null => minus(v, receivedBps);
  const sum = (a: number | null, b: number | null): number | null =>
    a === null && b === null ? null : (a ?? 0) + (b ?? 0);
  return {
    cpu: f.cpu === null ? null : Math.max(0, f.cpu - (f.ownCpu ?? 0)),
    memory: f.memory,
    diskBps: sum(minusOwn(f.diskReadBps), minusIn(f.diskWriteBps)),
    netBps: sum(minusIn(f.netRxBps), minusOwn(f.netTxBps)),
    onBattery: f.onBattery,
    metered: f.metered,
    servedBps,
    receivedBps,
  };
}
