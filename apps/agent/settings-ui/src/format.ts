import { formatSize } from '@fl-protocol/size.js';

export { formatSize };

/** Bytes/s as MB/s for people ('unlimited' for null). */
export function formatRate(bps: number | null): string {
  if (bps === null) return 'unlimited';
  if (bps >= 1e6) return `${(bps / 1e6).toFixed(1)} MB/s`;
  return `${Math.round(bps / 1e3)} kB/s`;
}

/** The tray's words for a governor state. */
export const STATE_LABEL: Record<string, { label: string; color: string }> = {
  idle: { label: 'Serving', color: 'green' },
  unknown: { label: 'Serving', color: 'green' },
  active: { label: 'Throttled: you are using this computer', color: 'yellow' },
  contended: { label: 'Throttled: this computer is busy', color: 'orange' },
  paused: { label: 'Paused', color: 'gray' },
};

/** When a pause ends, for people. */
export function formatPause(pause: { until: number | 'resumed' } | null): string {
  if (!pause) return 'not paused';
  if (pause.until === 'resumed') return 'paused until you resume';
  return `paused until ${new Date(pause.until).toLocaleString()}`;
}

export function formatIdle(ms: number | null): string {
  if (ms === null) return 'unknown';
  if (ms < 60_000) return `${Math.round(ms / 1000)} s`;
  return `${Math.round(ms / 60_000)} min`;
}

export const percent = (v: number | null): string =>
  v === null ? 'unknown' : `${Math.round(v * 100)} %`;
