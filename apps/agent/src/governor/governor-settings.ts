import { Type, type Static } from '@sinclair/typebox';
import { FreeLoaderError, KiB, MiB } from '@freeloader/protocol';
import { parseClock, ScheduleWindowSchema } from './schedule.js';

/** Native load above any of these (the agent's own share already subtracted) is contention. */
export interface Thresholds {
  /** Machine CPU busy fraction 0..1. */
  cpu: number;
  /** Memory in use fraction 0..1 (1 − available/total). */
  memory: number;
  /** Disk reads + writes, bytes/s. */
  diskBps: number;
  /** Network receive + transmit, bytes/s. */
  netBps: number;
}

const Cap = Type.Integer({ minimum: 0 });

/** How readily native load counts as contention. */
export const SensitivitySchema = Type.Union([
  Type.Literal('low'),
  Type.Literal('medium'),
  Type.Literal('high'),
]);
export type Sensitivity = Static<typeof SensitivitySchema>;

/**
 * What the owner chose; persisted in `<dir>/governor.json` and patched through the control API
 * (`control-api/local-api.ts`). The one declaration: the type is derived from it, so the file,
 * the API and the governor cannot drift apart.
 */
export const GovernorSettingsSchema = Type.Object({
  /** Serving cap while the owner is away (bytes/s); null = unlimited. */
  // Null first: Fastify's Ajv coerces types, and would turn null into 0 for the integer.
  idleCapBps: Type.Union([Type.Null(), Cap]),
  /** Serving cap while the owner is at the machine (bytes/s). */
  activeCapBps: Cap,
  /** No input for this long and the owner counts as away (milliseconds). */
  idleAfterMs: Type.Integer({ minimum: 0 }),
  sensitivity: SensitivitySchema,
  /** Per-metric overrides of the sensitivity's thresholds. */
  thresholds: Type.Partial(
    Type.Object({
      cpu: Type.Number(),
      memory: Type.Number(),
      diskBps: Type.Number(),
      netBps: Type.Number(),
    }),
  ),
  /** Weekly windows with their own cap (0 = do not serve in that window). */
  schedule: Type.Array(ScheduleWindowSchema, { maxItems: 64 }),
  pauseOnBattery: Type.Boolean(),
  pauseOnMetered: Type.Boolean(),
});
export type GovernorSettings = Static<typeof GovernorSettingsSchema>;

/** Lowest cap the governor ever paces at (bytes/s): a morsel still arrives in a few seconds. */
export const MIN_CAP_BPS = 256 * KiB;

export const SENSITIVITY_THRESHOLDS: Record<Sensitivity, Thresholds> = {
  low: { cpu: 0.9, memory: 0.95, diskBps: 120 * MiB, netBps: 60 * MiB },
  medium: { cpu: 0.75, memory: 0.9, diskBps: 60 * MiB, netBps: 30 * MiB },
  high: { cpu: 0.5, memory: 0.85, diskBps: 25 * MiB, netBps: 10 * MiB },
};

export const DEFAULT_GOVERNOR_SETTINGS: GovernorSettings = {
  idleCapBps: null,
  activeCapBps: 2 * MiB,
  idleAfterMs: 60_000,
  sensitivity: 'medium',
  thresholds: {},
  schedule: [],
  pauseOnBattery: true,
  pauseOnMetered: true,
};

/** The thresholds in force: the sensitivity's, with the owner's overrides on top. */
export function thresholdsOf(s: GovernorSettings): Thresholds {
  return { ...SENSITIVITY_THRESHOLDS[s.sensitivity], ...s.thresholds };
}

/**
 * Merge a partial update into settings, validating every field; throws VALIDATION_FAILED with
 * the first bad field named.
 *
 * @example mergeSettings(DEFAULT_GOVERNOR_SETTINGS, { activeCapBps: 1048576 })
 */
export function mergeSettings(
  base: GovernorSettings,
  patch: Partial<GovernorSettings>,
): GovernorSettings {
  const s: GovernorSettings = { ...base, ...stripUndefined(patch) };
  const bad = (field: string, why: string): never => {
    throw new FreeLoaderError('VALIDATION_FAILED', `${field}: ${why}`);
  };
  if (s.idleCapBps !== null && !(s.idleCapBps >= MIN_CAP_BPS)) {
    bad('idleCapBps', `at least ${MIN_CAP_BPS} bytes/s, or null for unlimited`);
  }
  if (!(s.activeCapBps >= MIN_CAP_BPS)) bad('activeCapBps', `at least ${MIN_CAP_BPS} bytes/s`);
  if (!(s.idleAfterMs >= 1_000 && s.idleAfterMs <= 3_600_000)) {
    bad('idleAfterMs', 'between 1 s and 1 h');
  }
  if (!(s.sensitivity in SENSITIVITY_THRESHOLDS)) bad('sensitivity', 'low, medium or high');
  for (const [k, v] of Object.entries(s.thresholds ?? {})) {
    if (!(k in SENSITIVITY_THRESHOLDS.low)) bad(`thresholds.${k}`, 'unknown threshold');
    if (typeof v !== 'number' || !(v > 0)) bad(`thresholds.${k}`, 'a positive number');
  }
  if (!Array.isArray(s.schedule) || s.schedule.length > 64) bad('schedule', 'up to 64 windows');
  s.schedule.forEach((w, i) => {
    if (!Array.isArray(w.days) || w.days.some((d) => !Number.isInteger(d) || d < 0 || d > 6)) {
      bad(`schedule[${i}].days`, 'weekdays 0 (Sunday) … 6');
    }
    parseClock(w.start, `schedule[${i}].start`);
    parseClock(w.end, `schedule[${i}].end`);
    if (!(w.capBps === 0 || w.capBps >= MIN_CAP_BPS)) {
      bad(`schedule[${i}].capBps`, `0 (no serving) or at least ${MIN_CAP_BPS}`);
    }
  });
  s.pauseOnBattery = Boolean(s.pauseOnBattery);
  s.pauseOnMetered = Boolean(s.pauseOnMetered);
  return s;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
