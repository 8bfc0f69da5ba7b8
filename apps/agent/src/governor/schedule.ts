import { Type, type Static } from '@sinclair/typebox';
import { FreeLoaderError } from '@freeloader/protocol';

/**
 * A weekly window with its own serving cap, in the machine's local time. `end` before `start`
 * wraps past midnight into the next day (22:00–06:00 on a Friday covers Saturday morning).
 */
export const ScheduleWindowSchema = Type.Object({
  /** Weekdays the window starts on: 0 = Sunday … 6 = Saturday. */
  days: Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), { maxItems: 7 }),
  /** 'HH:MM', 24-hour. */
  start: Type.String({ maxLength: 5 }),
  end: Type.String({ maxLength: 5 }),
  /** Cap in bytes/s inside the window; 0 = do not serve. */
  capBps: Type.Integer({ minimum: 0 }),
});
export type ScheduleWindow = Static<typeof ScheduleWindowSchema>;

/** Minutes after midnight of an 'HH:MM' string; throws VALIDATION_FAILED naming `field`. */
export function parseClock(text: string, field = 'time'): number {
  const m = /^([01]?\d|2[0-3]):([0-5]\d)$/.exec(String(text));
  if (!m) throw new FreeLoaderError('VALIDATION_FAILED', `${field}: expected HH:MM, got ${text}`);
  return Number(m[1]) * 60 + Number(m[2]);
}

/**
 * The lowest cap of the windows covering `at` (local time), or undefined when none does.
 *
 * @example
 *   scheduleCapAt(new Date('2026-01-05T10:00'), [{ days: [1], start: '09:00', end: '17:00', capBps: 0 }])
 *   // → 0 (Monday office hours: no serving)
 */
export function scheduleCapAt(at: Date, windows: readonly ScheduleWindow[]): number | undefined {
  const minute = at.getHours() * 60 + at.getMinutes();
  const today = at.getDay();
  const yesterday = (today + 6) % 7;
  let cap: number | undefined;
  for (const w of windows) {
    const start = parseClock(w.start);
    const end = parseClock(w.end);
    const covers =
      start < end
        ? w.days.includes(today) && minute >= start && minute < end
        : // Wrapping window: the evening part today, or the morning part of yesterday's window.
          (w.days.includes(today) && minute >= start) ||
          (w.days.includes(yesterday) && minute < end);
    if (covers) cap = cap === undefined ? w.capBps : Math.min(cap, w.capBps);
  }
  return cap;
}
