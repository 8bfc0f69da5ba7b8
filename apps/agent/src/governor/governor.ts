import { GiB, MiB, type ThrottleState } from '@freeloader/protocol';
import {
  MIN_CAP_BPS,
  thresholdsOf,
  type GovernorSettings,
  type Thresholds,
} from './governor-settings.js';
import { pauseHolds, type Pause } from './pause.js';
import type { MonitorSample } from './sample.js';
import { scheduleCapAt } from './schedule.js';

/** Monotonic milliseconds for timing, wall time for pauses and schedules (both injectable). */
export interface GovernorClock {
  now(): number;
  wall(): Date;
}

export const SYSTEM_CLOCK: GovernorClock = {
  now: () => performance.now(),
  wall: () => new Date(),
};

/** Additive-increase / multiplicative-decrease under native contention. */
export interface AimdParams {
  /** Cap multiplier on each decrease. */
  decreaseFactor: number;
  /** At most one decrease this often while contention lasts (ms): its effect needs a moment. */
  decreaseEveryMs: number;
  /** Cap added per probe once contention is gone (bytes/s), at least. */
  probeStepBps: number;
  /** …or this fraction of the cap, when larger: recovery from a deep cut takes seconds, not minutes. */
  probeFraction: number;
  probeEveryMs: number;
  /** With no finite base cap, probing stops (unlimited again) above this rate (bytes/s). */
  releaseAboveBps: number;
}

export const DEFAULT_AIMD: AimdParams = {
  decreaseFactor: 0.5,
  decreaseEveryMs: 1_000,
  probeStepBps: 2 * MiB,
  probeFraction: 0.25,
  probeEveryMs: 1_000,
  releaseAboveBps: 1 * GiB,
};

export interface GovernorDecision {
  state: ThrottleState;
  /** Serving cap in bytes/s: Infinity = unlimited, 0 = paused (requests are refused). */
  capBps: number;
  /** Why, for people: 'owner active', 'cpu 0.93 > 0.75', 'paused', 'schedule', … */
  reasons: string[];
}

/**
 * The serving governor's state machine. Feed it monitor samples; it answers with a state and a
 * cap. Precedence: pauses (manual, schedule window with cap 0, battery, metered) → owner active
 * (the active cap) → owner idle (the idle cap); schedule caps and the AIMD contention cap lower
 * whichever applies. Pure apart from its own memory: the clock is injected, nothing is read
 * from the machine here.
 *
 * @example
 *   const g = new Governor(DEFAULT_GOVERNOR_SETTINGS, clock);
 *   g.update({ ...UNKNOWN_SAMPLE, ownerIdleMs: 0 }) // → { state: 'active', capBps: 2 MiB, … }
 */
export class Governor {
  private aimdCap = Infinity;
  private lastDecrease = -Infinity;
  private lastProbe = -Infinity;
  /** The contention that last cut the cap: still the reason while the cap probes back up. */
  private lastContention: string[] = [];
  private current: GovernorDecision = { state: 'unknown', capBps: Infinity, reasons: [] };

  constructor(
    private settings: GovernorSettings,
    private readonly clock: GovernorClock = SYSTEM_CLOCK,
    private pauseState: Pause | null = null,
    private readonly aimd: AimdParams = DEFAULT_AIMD,
  ) {}

  get decision(): GovernorDecision {
    return this.current;
  }

  /** The manual pause in force (null once it has run out). */
  get pause(): Pause | null {
    return this.pauseState;
  }

  /** New settings start afresh: a contention cut made under the old thresholds is dropped. */
  setSettings(settings: GovernorSettings): void {
    this.settings = settings;
    this.aimdCap = Infinity;
    this.lastContention = [];
  }

  setPause(pause: Pause | null): void {
    this.pauseState = pause;
  }

  update(sample: MonitorSample): GovernorDecision {
    const wall = this.clock.wall();
    if (this.pauseState && !pauseHolds(this.pauseState, wall)) this.pauseState = null;
    const scheduled = scheduleCapAt(wall, this.settings.schedule);
    const pausedBy = this.pausedBy(sample, scheduled);
    if (pausedBy) {
      this.current = { state: 'paused', capBps: 0, reasons: [pausedBy] };
      return this.current;
    }
    const s = this.settings;
    const active = sample.ownerIdleMs !== null && sample.ownerIdleMs < s.idleAfterMs;
    let base = active ? s.activeCapBps : (s.idleCapBps ?? Infinity);
    if (scheduled !== undefined) base = Math.min(base, scheduled);
    const contention = contentionOf(sample, thresholdsOf(s));
    // The cap bounds everything the agent moves (served, pushed and pulled), so cut from that.
    this.stepAimd(contention.length > 0, base, sample.servedBps + sample.receivedBps);

    if (contention.length > 0) this.lastContention = contention;
    // A cap still below its base after contention ended is that contention's doing: say so,
    // rather than report a throttled state with no reason.
    const reasons =
      contention.length > 0 || this.aimdCap === Infinity
        ? [...contention]
        : this.lastContention.map((r) => `recovering after ${r}`);
    if (active) reasons.unshift('owner active');
    if (scheduled !== undefined) reasons.push('schedule');
    const state: ThrottleState = active
      ? 'active'
      : this.aimdCap < Infinity
        ? 'contended'
        : sample.ownerIdleMs === null
          ? 'unknown'
          : 'idle';
    this.current = { state, capBps: Math.min(base, this.aimdCap), reasons };
    return this.current;
  }

  private pausedBy(sample: MonitorSample, scheduled: number | undefined): string | undefined {
    if (this.pauseState) return 'paused by the owner';
    if (scheduled === 0) return 'schedule';
    if (this.settings.pauseOnBattery && sample.onBattery === true) return 'on battery';
    if (this.settings.pauseOnMetered && sample.metered === true) return 'metered network';
    return undefined;
  }

  /**
   * Halve under contention (from what is really being sent); once it is gone, probe upward by a
   * step or a fraction of the cap, whichever is larger, until the base cap (or, with no base,
   * `releaseAboveBps`) is reached.
   */
  private stepAimd(contended: boolean, base: number, servedBps: number): void {
    const now = this.clock.now();
    if (contended) {
      if (now - this.lastDecrease < this.aimd.decreaseEveryMs) return;
      const from = Math.min(this.aimdCap, base, Math.max(servedBps, MIN_CAP_BPS));
      this.aimdCap = Math.max(MIN_CAP_BPS, from * this.aimd.decreaseFactor);
      this.lastDecrease = now;
      this.lastProbe = now;
      return;
    }
    if (this.aimdCap === Infinity || now - this.lastProbe < this.aimd.probeEveryMs) return;
    this.aimdCap += Math.max(this.aimd.probeStepBps, this.aimdCap * this.aimd.probeFraction);
    this.lastProbe = now;
    if (this.aimdCap >= Math.min(base, this.aimd.releaseAboveBps)) this.aimdCap = Infinity;
  }
}

/** The metrics above their thresholds, as readable reasons ('cpu 0.93 > 0.75'). */
export function contentionOf(sample: MonitorSample, t: Thresholds): string[] {
  const out: string[] = [];
  const check = (name: string, value: number | null, limit: number, digits: number): void => {
    if (value !== null && value > limit) {
      out.push(`${name} ${value.toFixed(digits)} > ${limit.toFixed(digits)}`);
    }
  };
  check('cpu', sample.cpu, t.cpu, 2);
  check('memory', sample.memory, t.memory, 2);
  check('disk MB/s', sample.diskBps === null ? null : sample.diskBps / 1e6, t.diskBps / 1e6, 1);
  check('network MB/s', sample.netBps === null ? null : sample.netBps / 1e6, t.netBps / 1e6, 1);
  return out;
}
