import { Type, type Static } from '@sinclair/typebox';
import type { LeaveProgress } from '@freeloader/protocol';
import { GovernorSettingsSchema, type GovernorSettings } from '../governor/governor-settings.js';
import type { RelocationProgress } from '../relocation/relocation-tracker.js';

/**
 * The agent's local control API (served on 127.0.0.1 behind the local token): what the settings
 * page, the tray and tests call to see and steer this donor. Not part of the manager contract,
 * so it lives here rather than in the protocol package. "Settings" in the agent means one of:
 * this API and its page (`control-api/`), the governor's settings (`GovernorSettings`, kept in
 * `governor.json`), and the donated space remembered across restarts (`state/settings-file.ts`).
 */

/** A partial update of the governor's settings: the governor's own schema, every field optional. */
export const GovernorSettingsPatch = Type.Partial(GovernorSettingsSchema);
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
    settings: GovernorSettings;
  };
  relocation: RelocationProgress;
  /** A graceful leave under way (or done): copies still to move elsewhere. */
  leave?: LeaveProgress;
}
