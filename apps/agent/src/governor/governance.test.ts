import { describe, expect, it } from 'vitest';
import { ownerPollMs } from './governance.js';
import { NO_OWNER_INPUT, platformIdleSource, type OwnerIdleSource } from './owner-idle.js';

const someInput: OwnerIdleSource = async () => 5;

describe('ownerPollMs', () => {
  it.each([
    [
      'nothing can tell owner input: the machine sample pace',
      NO_OWNER_INPUT,
      undefined,
      1000,
      1000,
    ],
    ['a real source: 4 times a second', someInput, undefined, 1000, 250],
    ['a configured pace wins', NO_OWNER_INPUT, 100, 1000, 100],
    ['a configured pace wins over a real source too', someInput, 500, 1000, 500],
  ] as Array<[string, OwnerIdleSource, number | undefined, number, number]>)(
    '%s',
    (_name, source, configured, system, expected) => {
      expect(ownerPollMs(source, configured, system)).toBe(expected);
    },
  );

  it.runIf(process.platform === 'linux').each([
    ['a headless Linux (no DISPLAY) has nothing', {}, 2000],
    ['Wayland has nothing', { DISPLAY: ':0', WAYLAND_DISPLAY: 'wayland-0' }, 2000],
    ['X11 has xprintidle', { DISPLAY: ':0' }, 250],
  ] as const)('%s', (_name, env, expected) => {
    expect(ownerPollMs(platformIdleSource(env), undefined, 2000)).toBe(expected);
  });
});
