import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { holdsBackgroundWork } from './background-hold.js';
import { DEFAULT_AIMD, Governor, contentionOf, type GovernorClock } from './governor.js';
import {
  DEFAULT_GOVERNOR_SETTINGS,
  MIN_CAP_BPS,
  SENSITIVITY_THRESHOLDS,
  mergeSettings,
  type GovernorSettings,
} from './governor-settings.js';
import { pauseFor } from './pause.js';
import { UNKNOWN_SAMPLE, type MonitorSample } from './sample.js';

/** A clock the test moves by hand: monotonic ms and a wall time (Monday 2026-03-02 10:00 local). */
function testClock(): GovernorClock & { advance(ms: number): void; set(wall: Date): void } {
  let mono = 0;
  let wall = new Date(2026, 2, 2, 10, 0).getTime();
  return {
    now: () => mono,
    wall: () => new Date(wall),
    advance(ms) {
      mono += ms;
      wall += ms;
    },
    set(d) {
      wall = d.getTime();
    },
  };
}

const settings = (patch: Partial<GovernorSettings> = {}): GovernorSettings =>
  mergeSettings(DEFAULT_GOVERNOR_SETTINGS, {
    idleCapBps: 50 * MiB,
    activeCapBps: 2 * MiB,
    idleAfterMs: 30_000,
    pauseOnBattery: true,
    ...patch,
  });

const quiet: MonitorSample = {
  ...UNKNOWN_SAMPLE,
  ownerIdleMs: 600_000,
  cpu: 0.1,
  memory: 0.4,
  diskBps: 1 * MiB,
  netBps: 0.5 * MiB,
  onBattery: false,
  metered: false,
  servedBps: 40 * MiB,
};
const busyCpu: MonitorSample = { ...quiet, cpu: 0.95 };

describe('Governor', () => {
  it('idle → active within one sample → contention (AIMD down) → recovery (probe up, release)', () => {
    const clock = testClock();
    const g = new Governor(settings(), clock);
    expect(g.update(quiet)).toMatchObject({ state: 'idle', capBps: 50 * MiB });

    // Owner touches the mouse: the very next sample drops to the active cap.
    clock.advance(250);
    expect(g.update({ ...quiet, ownerIdleMs: 120 })).toMatchObject({
      state: 'active',
      capBps: 2 * MiB,
      reasons: ['owner active'],
    });
    // Still counted active until idleAfterMs of no input has passed.
    clock.advance(29_000);
    expect(g.update({ ...quiet, ownerIdleMs: 29_000 }).state).toBe('active');
    clock.advance(1_000);
    expect(g.update({ ...quiet, ownerIdleMs: 30_000 })).toMatchObject({
      state: 'idle',
      capBps: 50 * MiB,
    });

    // Native CPU load: halve from what is being served, at most once per decreaseEveryMs.
    clock.advance(1_000);
    const first = g.update(busyCpu);
    expect(first.state).toBe('contended');
    expect(first.capBps).toBe(20 * MiB);
    expect(first.reasons).toEqual(['cpu 0.95 > 0.75']);
    clock.advance(500);
    expect(g.update(busyCpu).capBps).toBe(20 * MiB);
    clock.advance(500);
    expect(g.update({ ...busyCpu, servedBps: 20 * MiB }).capBps).toBe(10 * MiB);
    // Never below the floor, however long contention lasts.
    for (let i = 0; i < 20; i++) {
      clock.advance(1_000);
      g.update(busyCpu);
    }
    expect(g.decision.capBps).toBe(MIN_CAP_BPS);

    // Contention gone: probe upward once a second (a step, or a quarter of the cap when that is
    // more), then release to the idle cap.
    clock.advance(1_000);
    expect(g.update(quiet).capBps).toBe(MIN_CAP_BPS + DEFAULT_AIMD.probeStepBps);
    clock.advance(400);
    expect(g.update(quiet).capBps).toBe(MIN_CAP_BPS + DEFAULT_AIMD.probeStepBps);
    const caps = [g.decision.capBps];
    while (g.decision.state === 'contended' && caps.length < 100) {
      clock.advance(1_000);
      caps.push(g.update(quiet).capBps);
    }
    expect(g.decision).toMatchObject({ state: 'idle', capBps: 50 * MiB });
    expect(caps.slice(1).every((cap, i) => cap > caps[i]!)).toBe(true);
    // 2.25 → 4.25 → 6.25 → 8.25 MiB/s by steps, then ×1.25 a second up to 50 MiB/s.
    expect(caps).toHaveLength(13);
  });

  it('a throttled state always says why: a cap probing back up names the contention that cut it', () => {
    const clock = testClock();
    const g = new Governor(settings(), clock);
    expect(g.update(busyCpu)).toMatchObject({ state: 'contended', reasons: ['cpu 0.95 > 0.75'] });
    clock.advance(1_000);
    const recovering = g.update(quiet);
    expect(recovering.state).toBe('contended');
    expect(recovering.capBps).toBeLessThan(50 * MiB);
    expect(recovering.reasons).toEqual(['recovering after cpu 0.95 > 0.75']);
    // Released: idle again, nothing to explain.
    for (let i = 0; i < 100 && g.decision.state === 'contended'; i++) {
      clock.advance(1_000);
      g.update(quiet);
    }
    expect(g.decision).toMatchObject({ state: 'idle', reasons: [] });
    // Every state that holds serving back has a reason.
    clock.advance(1_000);
    expect(g.update({ ...quiet, ownerIdleMs: 0 }).reasons).toEqual(['owner active']);
    g.setPause(pauseFor('1h', clock.wall()));
    expect(g.update(quiet).reasons).toEqual(['paused by the owner']);
  });

  it('new settings drop a contention cut made under the old thresholds', () => {
    const clock = testClock();
    const g = new Governor(settings(), clock);
    expect(g.update(busyCpu).state).toBe('contended');
    g.setSettings(settings({ thresholds: { cpu: 0.99 } }));
    expect(g.update(busyCpu)).toMatchObject({ state: 'idle', capBps: 50 * MiB });
  });

  it('unknown owner input is reported as unknown, never guessed; contention still applies', () => {
    const clock = testClock();
    const g = new Governor(settings({ idleCapBps: null }), clock);
    expect(g.update({ ...quiet, ownerIdleMs: null })).toMatchObject({
      state: 'unknown',
      capBps: Infinity,
    });
    clock.advance(1_000);
    const d = g.update({ ...quiet, ownerIdleMs: null, netBps: 80 * MiB, servedBps: 8 * MiB });
    expect(d).toMatchObject({ state: 'contended', capBps: 4 * MiB });
    expect(d.reasons).toEqual(['network MB/s 83.9 > 31.5']);
  });

  it('an active owner under contention gets the lower of the active and AIMD caps', () => {
    const clock = testClock();
    const g = new Governor(settings({ activeCapBps: 4 * MiB }), clock);
    const d = g.update({ ...busyCpu, ownerIdleMs: 0, servedBps: 4 * MiB });
    expect(d).toMatchObject({ state: 'active', capBps: 2 * MiB });
    expect(d.reasons).toEqual(['owner active', 'cpu 0.95 > 0.75']);
  });

  it.each([
    ['1h', 3_599_000, 'paused', 3_601_000, 'idle'],
    ['tomorrow', 13 * 3600_000, 'paused', 14 * 3600_000 + 1_000, 'idle'],
    ['indefinite', 30 * 24 * 3600_000, 'paused', 31 * 24 * 3600_000, 'paused'],
  ] as const)('pause %s: after %i ms %s, after %i ms %s', (span, during, s1, after, s2) => {
    const clock = testClock();
    const g = new Governor(settings(), clock);
    g.setPause(pauseFor(span, clock.wall()));
    expect(g.update(quiet)).toEqual({
      state: 'paused',
      capBps: 0,
      reasons: ['paused by the owner'],
    });
    clock.advance(during);
    expect(g.update(quiet).state).toBe(s1);
    clock.advance(after - during);
    expect(g.update(quiet).state).toBe(s2);
    expect(g.pause === null).toBe(s2 !== 'paused');
  });

  it.each([
    // Monday 10:00 inside a Monday 09:00–17:00 no-serving window.
    ['office hours, no serving', new Date(2026, 2, 2, 10, 0), 0, 'paused', 0],
    // Monday 18:00: outside it.
    ['evening', new Date(2026, 2, 2, 18, 0), 0, 'idle', 50 * MiB],
    // Tuesday 03:00 inside Monday's 22:00–06:00 wrapping window with a 5 MiB/s cap.
    ['night window wraps', new Date(2026, 2, 3, 3, 0), 5 * MiB, 'idle', 5 * MiB],
  ] as const)('schedule: %s', (_name, wall, capBps, state, expected) => {
    const clock = testClock();
    clock.set(wall);
    const schedule =
      capBps === 0
        ? [{ days: [1], start: '09:00', end: '17:00', capBps: 0 }]
        : [{ days: [1], start: '22:00', end: '06:00', capBps }];
    const g = new Governor(settings({ schedule }), clock);
    expect(g.update(quiet)).toMatchObject({ state, capBps: expected });
  });

  it.each([
    ['battery', { onBattery: true }, { pauseOnBattery: true }, 'paused'],
    ['battery ignored', { onBattery: true }, { pauseOnBattery: false }, 'idle'],
    ['metered', { metered: true }, { pauseOnMetered: true }, 'paused'],
    ['metered unknown', { metered: null }, { pauseOnMetered: true }, 'idle'],
  ] as const)('%s', (_name, sample, patch, state) => {
    const g = new Governor(settings(patch), testClock());
    expect(g.update({ ...quiet, ...sample }).state).toBe(state);
  });
});

describe('contentionOf', () => {
  it.each([
    ['nothing high', quiet, []],
    ['memory', { ...quiet, memory: 0.97 }, ['memory 0.97 > 0.90']],
    ['disk', { ...quiet, diskBps: 100e6 }, ['disk MB/s 100.0 > 62.9']],
    ['unknown metrics never count', { ...UNKNOWN_SAMPLE }, []],
  ] as const)('%s', (_name, sample, reasons) => {
    expect(contentionOf(sample, SENSITIVITY_THRESHOLDS.medium)).toEqual(reasons);
  });
});

describe('mergeSettings', () => {
  it.each([
    [{ activeCapBps: 1000 }, /activeCapBps/],
    [{ idleCapBps: 0 }, /idleCapBps/],
    [{ sensitivity: 'extreme' as never }, /sensitivity/],
    [{ schedule: [{ days: [7], start: '09:00', end: '10:00', capBps: 0 }] }, /days/],
    [{ schedule: [{ days: [1], start: '9am', end: '10:00', capBps: 0 }] }, /start/],
    [{ thresholds: { cpu: -1 } }, /thresholds.cpu/],
  ])('rejects %j', (patch, message) => {
    expect(() => mergeSettings(DEFAULT_GOVERNOR_SETTINGS, patch)).toThrow(message);
  });

  it('keeps what a patch leaves out', () => {
    const s = mergeSettings(DEFAULT_GOVERNOR_SETTINGS, { activeCapBps: 3 * MiB });
    expect(s).toEqual({ ...DEFAULT_GOVERNOR_SETTINGS, activeCapBps: 3 * MiB });
  });
});

// The scrub waits exactly while the governor says the owner is active or donating is paused.
describe('holdsBackgroundWork over the governor’s decisions', () => {
  it.each([
    ['owner away', quiet, 'idle', false],
    ['owner at the keyboard', { ...quiet, ownerIdleMs: 100 }, 'active', true],
    ['machine busy, owner away', busyCpu, 'contended', false],
    ['on battery (donating paused)', { ...quiet, onBattery: true }, 'paused', true],
  ])('%s', (_label, sample, state, held) => {
    const decision = new Governor(settings(), testClock()).update(sample);
    expect(decision.state).toBe(state);
    expect(holdsBackgroundWork(decision.state)).toBe(held);
  });

  it('a manual pause holds it; resuming lets it go on', () => {
    const g = new Governor(settings(), testClock());
    g.setPause({ until: 'resumed' });
    expect(holdsBackgroundWork(g.update(quiet).state)).toBe(true);
    g.setPause(null);
    expect(holdsBackgroundWork(g.update(quiet).state)).toBe(false);
  });
});
