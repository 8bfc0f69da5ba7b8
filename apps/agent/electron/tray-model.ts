import type { LocalState } from '@freeloader/agent';
import { formatSize } from '@freeloader/protocol';

/** What the tray icon shows. */
export type TrayState = 'serving' | 'throttled' | 'paused' | 'offline' | 'error';

/** Everything the tray knows, gathered by the shell each refresh. */
export interface ShellFacts {
  /** The agent's state from its settings API; null before it answers. */
  state: LocalState | null;
  /** A problem the shell itself hit (the daemon failed to start, …). */
  error: string | null;
  mounted: boolean;
  startAtLogin: boolean;
  /** The manager's console, when known. */
  consoleUrl: string | null;
}

export type MenuAction =
  | 'open-settings'
  | 'pause-1h'
  | 'pause-tomorrow'
  | 'pause-indefinite'
  | 'resume'
  | 'open-console'
  | 'mount'
  | 'unmount'
  | 'toggle-login'
  | 'quit';

/** A menu entry, free of Electron types (main.ts turns it into a MenuItem). */
export interface MenuItemModel {
  type?: 'normal' | 'separator' | 'checkbox' | 'submenu';
  label?: string;
  action?: MenuAction;
  enabled?: boolean;
  checked?: boolean;
  submenu?: MenuItemModel[];
}

/**
 * The icon's state: error (the shell failed, or the manager revoked us) → offline (not
 * enrolled, not started, manager unreachable) → paused → throttled (owner active, machine
 * busy) → serving.
 */
export function trayState(f: ShellFacts): TrayState {
  const s = f.state;
  if (f.error || s?.status === 'revoked') return 'error';
  if (!s || !s.enrolled || s.status !== 'online') return 'offline';
  if (s.governor.state === 'paused') return 'paused';
  if (s.governor.state === 'active' || s.governor.state === 'contended') return 'throttled';
  return 'serving';
}

const rate = (bps: number | null): string =>
  bps === null ? 'unlimited' : `${(bps / 1e6).toFixed(1)} MB/s`;

/** One line saying what FreeLoader is doing (menu header and tooltip). */
export function headline(f: ShellFacts, now = Date.now()): string {
  const s = f.state;
  switch (trayState(f)) {
    case 'error':
      return f.error ?? 'Removed from the cache by its admin: join again with a new token';
    case 'offline':
      if (!s) return 'Starting…';
      if (!s.enrolled) return 'Not joined to a cache yet';
      return s.status === 'offline' ? 'Offline: the manager does not answer' : `Agent ${s.status}`;
    case 'paused': {
      const p = s!.governor.pause;
      if (!p) return `Paused (${s!.governor.reasons.join(', ')})`;
      if (p.until === 'resumed') return 'Paused until resumed';
      const left = Math.max(0, p.until - now);
      return left < 24 * 3600_000
        ? `Paused until ${new Date(p.until).toTimeString().slice(0, 5)}`
        : 'Paused';
    }
    case 'throttled':
      return s!.governor.state === 'active'
        ? `Throttled to ${rate(s!.governor.capBps)}: you are using this computer`
        : `Throttled to ${rate(s!.governor.capBps)}: this computer is busy`;
    case 'serving':
      return `Serving ${rate(s!.servingBps)}`;
  }
}

/** The tooltip: the headline, prefixed with the product name. */
export function tooltip(f: ShellFacts): string {
  return `FreeLoader — ${headline(f)}`;
}

/**
 * The tray menu: state, donated quota, pause (1 h / until tomorrow / until resumed) or resume,
 * open console, mount/unmount, settings, start at login, quit.
 */
export function menuModel(f: ShellFacts, now = Date.now()): MenuItemModel[] {
  const s = f.state;
  const enrolled = s?.enrolled === true;
  const paused = s?.governor.pause != null;
  const quota = enrolled
    ? `Donating ${formatSize(s.quota.quotaBytes)} (${formatSize(s.quota.usedBytes)} used)…`
    : 'Join a cache…';
  return [
    { label: headline(f, now), enabled: false },
    { label: quota, action: 'open-settings' },
    { type: 'separator' },
    paused
      ? { label: 'Resume donating', action: 'resume', enabled: enrolled }
      : {
          type: 'submenu',
          label: 'Pause donating',
          enabled: enrolled,
          submenu: [
            { label: 'For 1 hour', action: 'pause-1h' },
            { label: 'Until tomorrow', action: 'pause-tomorrow' },
            { label: 'Until resumed', action: 'pause-indefinite' },
          ],
        },
    { label: 'Open console', action: 'open-console', enabled: f.consoleUrl !== null },
    f.mounted
      ? { label: 'Unmount drive', action: 'unmount' }
      : { label: 'Mount drive', action: 'mount', enabled: enrolled },
    { label: 'Settings…', action: 'open-settings' },
    { type: 'separator' },
    { type: 'checkbox', label: 'Start at login', action: 'toggle-login', checked: f.startAtLogin },
    { label: 'Quit FreeLoader', action: 'quit' },
  ];
}

/** A desktop notification worth showing when the state moves from `prev` to `next`. */
export function notificationFor(
  prev: LocalState | null,
  next: LocalState,
): { title: string; body: string } | undefined {
  if (prev && !prev.enrolled && next.enrolled) {
    return { title: 'FreeLoader', body: `Joined the cache as ${next.name ?? 'this computer'}` };
  }
  if (next.status === 'revoked' && prev?.status !== 'revoked') {
    return { title: 'FreeLoader stopped', body: 'The cache admin removed this computer' };
  }
  const was = prev?.relocation.state;
  if (next.relocation.state === 'failed' && was !== 'failed') {
    return { title: 'FreeLoader', body: `Moving data off failed: ${next.relocation.error ?? ''}` };
  }
  if (next.relocation.state === 'done' && was === 'relocating') {
    return { title: 'FreeLoader', body: 'Finished moving data off this computer' };
  }
  return undefined;
}
