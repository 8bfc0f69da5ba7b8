/** One value at a real instant (ms since the epoch); null breaks the line. */
export interface TimePoint {
  at: number;
  value: number | null;
}

/** Tick steps a time axis may use, smallest first (milliseconds). */
const STEPS = [
  1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400, 172800,
  604800,
].map((s) => s * 1000);

/**
 * Insert a null point in every gap longer than `maxGapMs`, so a chart on a real time axis leaves
 * the gap empty instead of drawing a straight line across ten minutes nobody sampled.
 *
 * @example breakGaps([{at:0,value:1},{at:1000,value:2},{at:600000,value:3}], 5000)
 *   // → [{at:0,…},{at:1000,…},{at:300500,value:null},{at:600000,…}]
 */
export function breakGaps(points: readonly TimePoint[], maxGapMs: number): TimePoint[] {
  const sorted = [...points].sort((a, b) => a.at - b.at);
  const out: TimePoint[] = [];
  for (const p of sorted) {
    const last = out.at(-1);
    if (last && p.at - last.at > maxGapMs) {
      out.push({ at: Math.round((last.at + p.at) / 2), value: null });
    }
    out.push(p);
  }
  return out;
}

/**
 * Round tick times for the span [min, max]: about `target` of them, on a step from 1 s to a
 * week, aligned to the step in local time (so minutes fall on :00, :05 …).
 *
 * @example timeTicks(Date.parse('2025-01-01T10:00:03'), Date.parse('2025-01-01T10:09:58'))
 *   // → 10:02, 10:04, 10:06, 10:08 (2-minute steps)
 */
export function timeTicks(min: number, max: number, target = 5): { step: number; ticks: number[] } {
  if (!(max > min)) return { step: STEPS[0]!, ticks: [min] };
  const step = STEPS.find((s) => (max - min) / s <= target) ?? STEPS.at(-1)!;
  const offset = new Date(min).getTimezoneOffset() * 60_000;
  const first = Math.ceil((min - offset) / step) * step + offset;
  const ticks: number[] = [];
  for (let t = first; t <= max; t += step) ticks.push(t);
  return { step, ticks };
}

/**
 * A tick's label for its step: seconds when steps are under a minute, hours and minutes under
 * a day, else the date.
 */
export function tickLabel(at: number, step: number): string {
  const d = new Date(at);
  if (step >= 86_400_000) return d.toLocaleDateString([], { month: 'short', day: 'numeric' });
  if (step >= 60_000) return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });
  return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
}

/**
 * The largest gap still drawn as a line: a few sampling steps (the median spacing of the
 * points, at least `minStepMs`), so one late sample does not break it but an outage does.
 */
export function gapThreshold(points: readonly TimePoint[], minStepMs = 1000): number {
  const sorted = points.map((p) => p.at).sort((a, b) => a - b);
  const deltas = sorted.slice(1).map((t, i) => t - sorted[i]!);
  deltas.sort((a, b) => a - b);
  const median = deltas.length ? deltas[Math.floor(deltas.length / 2)]! : minStepMs;
  return 3 * Math.max(median, minStepMs);
}

/**
 * Rows for a multi-series chart: one row per instant, a key per series (null where a series
 * has no point, or where a gap is broken), sorted by time.
 *
 * @example seriesRows({ a: [{at: 1, value: 2}], b: [{at: 1, value: 3}] }, 5000)
 *   // → [{ at: 1, a: 2, b: 3 }]
 */
export function seriesRows(
  series: Record<string, readonly TimePoint[]>,
  maxGapMs: number,
): Array<Record<string, number | null>> {
  const rows = new Map<number, Record<string, number | null>>();
  for (const [name, points] of Object.entries(series)) {
    for (const p of breakGaps(points, maxGapMs)) {
      const row = rows.get(p.at) ?? { at: p.at };
      row[name] = p.value;
      rows.set(p.at, row);
    }
  }
  return [...rows.values()].sort((a, b) => a.at! - b.at!);
}
