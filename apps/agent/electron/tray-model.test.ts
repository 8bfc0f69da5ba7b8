import { describe, expect, it } from 'vitest';
import type { LocalState } from '@freeloader/agent';
import {
  headline,
  menuModel,
  notificationFor,
  trayState,
  type MenuItemModel,
  type ShellFacts,
} from './tray-model.js';

const MiB = 1048576;
const NOW = new Date(2026, 2, 2, 10, 0).getTime();

function state(patch: Partial<LocalState> = {}, governor: Partial<LocalState['governor']> = {}) {
  const base = {
    enrolled: true,
    agentId: 'a1',
    name: 'lab-pc-3',
    status: 'online',
    managerUrl: 'http://manager:7400',
    serviceUrl: 'http://lab-pc-3:7401',
    dir: '/home/o/.freeloader/agent',
    bandwidthOnly: false,
    quota: { quotaBytes: 20 * 1024 * MiB, usedBytes: 3 * 1024 * MiB, freeBytes: 17 * 1024 * MiB },
    servingBps: 12_300_000,
    governor: {
      state: 'idle',
      capBps: null,
      reasons: [],
      pause: null,
      ownerIdleMs: 600_000,
      sample: { cpu: 0.1, memory: 0.4, diskBps: 0, netBps: 0, onBattery: false, metered: null },
      settings: {} as LocalState['governor']['settings'],
      ...governor,
    },
    relocation: {
      state: 'idle',
      totalBytes: 0,
      doneBytes: 0,
      evicted: 0,
      unplacedBytes: 0,
      retainedBytes: 0,
      error: null,
    },
  } satisfies LocalState;
  return { ...base, ...patch };
}

const facts = (s: LocalState | null, patch: Partial<ShellFacts> = {}): ShellFacts => ({
  state: s,
  error: null,
  mounted: false,
  startAtLogin: false,
  consoleUrl: 'http://manager:7400/',
  ...patch,
});

describe('trayState and headline', () => {
  it.each([
    ['serving', facts(state()), 'serving', 'Serving 12.3 MB/s'],
    [
      'owner active',
      facts(state({}, { state: 'active', capBps: 2_000_000 })),
      'throttled',
      'Throttled to 2.0 MB/s: you are using this computer',
    ],
    [
      'busy machine',
      facts(state({}, { state: 'contended', capBps: 500_000 })),
      'throttled',
      'Throttled to 0.5 MB/s: this computer is busy',
    ],
    [
      'paused for an hour',
      facts(state({}, { state: 'paused', capBps: 0, pause: { until: NOW + 3600_000 } })),
      'paused',
      'Paused until 11:00',
    ],
    [
      'paused until resumed',
      facts(state({}, { state: 'paused', pause: { until: 'resumed' } })),
      'paused',
      'Paused until resumed',
    ],
    [
      'paused by the schedule',
      facts(state({}, { state: 'paused', reasons: ['schedule'] })),
      'paused',
      'Paused (schedule)',
    ],
    [
      'manager unreachable',
      facts(state({ status: 'offline' })),
      'offline',
      'Offline: the manager does not answer',
    ],
    [
      'not enrolled',
      facts(state({ enrolled: false, status: 'setup' })),
      'offline',
      'Not joined to a cache yet',
    ],
    ['starting', facts(null), 'offline', 'Starting…'],
    [
      'revoked',
      facts(state({ status: 'revoked' })),
      'error',
      'Removed from the cache by its admin: join again with a new token',
    ],
    ['shell error', facts(state(), { error: 'disk full' }), 'error', 'disk full'],
  ])('%s', (_name, f, icon, text) => {
    expect(trayState(f)).toBe(icon);
    expect(headline(f, NOW)).toBe(text);
  });
});

const labels = (items: MenuItemModel[]): string[] =>
  items.map((i) =>
    i.type === 'separator' ? '—' : `${i.label}${i.enabled === false ? ' (off)' : ''}`,
  );

describe('menuModel', () => {
  it('an enrolled, serving donor: quota, pause submenu, console, mount, settings, login, quit', () => {
    const menu = menuModel(facts(state()), NOW);
    expect(labels(menu)).toEqual([
      'Serving 12.3 MB/s (off)',
      'Donating 20 GiB (3 GiB used)…',
      '—',
      'Pause donating',
      'Open console',
      'Mount drive',
      'Settings…',
      '—',
      'Start at login',
      'Quit FreeLoader',
    ]);
    expect(menu[3]!.submenu!.map((i) => i.action)).toEqual([
      'pause-1h',
      'pause-tomorrow',
      'pause-indefinite',
    ]);
    expect(menu[8]).toMatchObject({ type: 'checkbox', checked: false, action: 'toggle-login' });
  });

  it.each([
    [
      'paused: resume instead of pause',
      facts(state({}, { pause: { until: 'resumed' } })),
      3,
      'Resume donating',
      'resume',
    ],
    ['mounted: unmount', facts(state(), { mounted: true }), 5, 'Unmount drive', 'unmount'],
    ['not enrolled: join', facts(state({ enrolled: false })), 1, 'Join a cache…', 'open-settings'],
  ] as const)('%s', (_name, f, at, label, action) => {
    expect(menuModel(f, NOW)[at]).toMatchObject({ label, action });
  });

  it('disables what cannot work yet', () => {
    const menu = menuModel(facts(state({ enrolled: false }), { consoleUrl: null }), NOW);
    expect(labels(menu)).toContain('Pause donating (off)');
    expect(labels(menu)).toContain('Open console (off)');
    expect(labels(menu)).toContain('Mount drive (off)');
  });
});

describe('notificationFor', () => {
  it.each([
    ['enrolled', state({ enrolled: false }), state(), 'Joined the cache as lab-pc-3'],
    ['revoked', state(), state({ status: 'revoked' }), 'The cache admin removed this computer'],
    [
      'relocation done',
      state({ relocation: { ...state().relocation, state: 'relocating' } }),
      state({ relocation: { ...state().relocation, state: 'done' } }),
      'Finished moving data off this computer',
    ],
    ['nothing new', state(), state(), undefined],
  ])('%s', (_name, prev, next, body) => {
    expect(notificationFor(prev, next)?.body).toBe(body);
  });
});
