const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/**
 * Human size in binary units, three significant digits.
 *
 * @example formatBytes(5 * 1048576) // '5.00 MiB'
 */
export function formatBytes(n: number): string {
  if (!Number.isFinite(n) || n < 0) return '—';
  let i = 0;
  let v = n;
  while (v >= 1024 && i < UNITS.length - 1) {
    v /= 1024;
    i++;
  }
  if (i === 0) return `${v} B`;
  return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} ${UNITS[i]}`;
}

/** Transfer rate in decimal megabytes per second, as scientists quote link speeds. */
export function formatRate(bytesPerSecond: number): string {
  if (!Number.isFinite(bytesPerSecond) || bytesPerSecond <= 0) return '0 MB/s';
  const mb = bytesPerSecond / 1e6;
  return `${mb >= 100 ? mb.toFixed(0) : mb >= 10 ? mb.toFixed(1) : mb.toFixed(2)} MB/s`;
}

/** Time left at `rate` for `remaining` bytes: '42 s', '3 min', '1 h 5 min'; '—' when unknown. */
export function formatEta(remaining: number, rate: number): string {
  if (remaining <= 0) return 'done';
  if (!(rate > 0)) return '—';
  return formatDuration((remaining / rate) * 1000);
}

/** A duration in ms as the two largest units. */
export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.round(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** 'just now', '5 s ago', '3 min ago' from a millisecond age; 'never' for null. */
export function formatAgo(ms: number | null): string {
  if (ms === null) return 'never';
  if (ms < 1500) return 'just now';
  return `${formatDuration(ms)} ago`;
}

/** Age of an ISO timestamp, for 'last access' columns. */
export function formatSince(iso: string | null, now = Date.now()): string {
  return iso === null ? 'never' : formatAgo(Math.max(0, now - Date.parse(iso)));
}

/** Percentage with no more precision than a person can see. */
export function formatPercent(fraction: number): string {
  if (!Number.isFinite(fraction)) return '—';
  const p = Math.min(100, Math.max(0, fraction * 100));
  return p > 0 && p < 1 ? '<1 %' : `${Math.floor(p)} %`;
}
