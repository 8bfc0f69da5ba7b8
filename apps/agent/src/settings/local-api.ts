import { Type, type Static } from '@sinclair/typebox';
import type { RelocationProgress } from '../relocation/relocation-tracker.js';

export type { RelocationProgress };

/**
 * The agent's local settings API (served on 127.0.0.1 behind the local token): what the
 * settings UI, the tray and tests call. Not part of the manager contract, so it lives here
 * rather than in the protocol package.
 */

const Cap = Type.Integer({ minimum: 0 });

export const ScheduleWindowSchema = Type.Object({
  days: Type.Array(Type.Integer({ minimum: 0, maximum: 6 }), { maxItems: 7 }),
  start: Type.String({ maxLength: 5 }),
  end: Type.String({ maxLength: 5 }),
  capBps: Cap,
});

export const GovernorSettingsPatch = Type.Partial(
  Type.Object({
    // Null first: Fastify's Ajv coerces types, and would turn null into 0 for the integer.
    idleCapBps: Type.Union([Type.Null(), Cap]),
    activeCapBps: Cap,
    idleAfterMs: Type.Integer({ minimum: 0 }),
    sensitivity: Type.Union([Type.Literal('low'), Type.Literal('medium'), Type.Literal('high')]),
    thresholds: Type.Partial(
      Type.Object({
        cpu: Type.Number(),
        memory: Type.Number(),
        diskBps: Type.Number(),
        netBps: Type.Number(),
      }),
    ),
    schedule: Type.Array(ScheduleWindowSchema, { maxItems: 64 }),
    pauseOnBattery: Type.Boolean(),
    pauseOnMetered: Type.Boolean(),
  }),
);
export type GovernorSettingsPatch = Static<typeof GovernorSettingsPatch>;

export const SettingsPatch = Type.Object({
  /** Donated space; lowering it below what is stored relocates the excess. */
  quotaBytes: Type.Optional(Type.Integer({ minimum: 0 })),
  governor: Type.Optional(GovernorSettingsPatch),
});
export type SettingsPatch = Static<typeof SettingsPatch>;

export const PauseRequest = Type.Object({
  span: Type.Union([Type.Literal('1h'), Type.Literal('tomorrow'), Type.Literal('indefinite')]),
});
export type PauseRequest = Static<typeof PauseRequest>;

export const OwnerActivity = Type.Object({
  /** Milliseconds since the owner's last input (0 = right now). */
  idleMs: Type.Integer({ minimum: 0 }),
});
export type OwnerActivity = Static<typeof OwnerActivity>;

export const EnrollLocal = Type.Object({
  managerUrl: Type.String({ minLength: 1, maxLength: 512 }),
  token: Type.String({ minLength: 1, maxLength: 512 }),
  quotaBytes: Type.Integer({ minimum: 0 }),
  name: Type.Optional(Type.String({ maxLength: 128 })),
});
export type EnrollLocal = Static<typeof EnrollLocal>;

/** Everything the settings UI and the tray show (`GET /api/state`). */
export interface LocalState {
  enrolled: boolean;
  agentId: string | null;
  name: string | null;
  /** starting, enrolling, online, offline, revoked, stopped — or 'setup' before enrollment. */
  status: string;
  managerUrl: string | null;
  serviceUrl: string | null;
  /** The state directory (identity, settings, morsel store). */
  dir: string;
  bandwidthOnly: boolean;
  quota: { quotaBytes: number; usedBytes: number; freeBytes: number };
  /** Bytes/s served over the last second or so. */
  servingBps: number;
  governor: {
    state: string;
    /** Effective cap in bytes/s; null = unlimited; 0 = paused. */
    capBps: number | null;
    reasons: string[];
    pause: { until: number | 'resumed' } | null;
    ownerIdleMs: number | null;
    sample: {
      cpu: number | null;
      memory: number | null;
      diskBps: number | null;
      netBps: number | null;
      onBattery: boolean | null;
      metered: boolean | null;
    };
    settings: Required<GovernorSettingsPatch>;
  };
  relocation: RelocationProgress;
}
