import { FreeLoaderError } from '@freeloader/protocol';

/** The tray's pause choices. */
export type PauseSpan = '1h' | 'tomorrow' | 'indefinite';

/** A pause in force: until a wall-clock instant (epoch ms), or until the owner resumes. */
export type Pause = { until: number } | { until: 'resumed' };

/**
 * When a pause chosen at `now` ends: an hour later, at the next local midnight, or never
 * (until resumed).
 *
 * @example pauseFor('tomorrow', new Date('2026-03-02T15:30')) // → { until: <2026-03-03T00:00 local> }
 */
export function pauseFor(span: PauseSpan, now: Date): Pause {
  switch (span) {
    case '1h':
      return { until: now.getTime() + 3_600_000 };
    case 'tomorrow': {
      const midnight = new Date(now);
      midnight.setHours(24, 0, 0, 0);
      return { until: midnight.getTime() };
    }
    case 'indefinite':
      return { until: 'resumed' };
    default:
      throw new FreeLoaderError('VALIDATION_FAILED', `pause: 1h, tomorrow or indefinite`);
  }
}

/** Whether `pause` still holds at `now`. */
export function pauseHolds(pause: Pause | null, now: Date): boolean {
  if (!pause) return false;
  return pause.until === 'resumed' || now.getTime() < pause.until;
}
