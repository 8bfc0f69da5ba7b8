/**
 * FreeLoader in the system tray. The main process is a list of setup steps around the donor
 * daemon (which also runs headless as `freeloader agent`); what the tray shows and offers is
 * computed by pure functions in tray-model.ts, tested without Electron.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  BrowserWindow,
  Menu,
  Notification,
  Tray,
  app,
  nativeImage,
  powerMonitor,
  shell,
  type MenuItemConstructorOptions,
} from 'electron';
import { pino } from 'pino';
import { AgentHost, type LocalState } from '@freeloader/agent';
import { DEFAULT_AGENT_PORT } from '@freeloader/protocol';
import {
  defaultShellConfig,
  loadShellConfig,
  saveShellConfig,
  type ShellConfig,
} from './shell-config.js';
import { trayIconPng } from './tray-icon.js';
import {
  menuModel,
  notificationFor,
  trayState,
  tooltip,
  type MenuAction,
  type MenuItemModel,
  type ShellFacts,
} from './tray-model.js';

// Compiled to apps/agent/dist/electron/, beside the CLI in dist/cli/.
const CLI = fileURLToPath(new URL('../cli/main.js', import.meta.url));
const REFRESH_MS = 1_000;

/** Mutable shell state shared by the steps. */
interface Shell {
  config: ShellConfig;
  host: AgentHost | null;
  tray: Tray | null;
  window: BrowserWindow | null;
  mount: ChildProcess | null;
  last: LocalState | null;
  error: string | null;
}

async function main(): Promise<void> {
  if (!setupSingleInstance()) return;
  await app.whenReady();
  const shell = await setupConfig();
  setupStartAtLogin(shell);
  await setupAgent(shell);
  setupTray(shell);
  setupFirstWindow(shell);
  setupQuit(shell);
}

/** One tray per user: a second start shows the first one's settings window instead. */
function setupSingleInstance(): boolean {
  if (!app.requestSingleInstanceLock()) {
    app.quit();
    return false;
  }
  app.on('second-instance', () => openSettings(current!));
  // Closing the settings window keeps FreeLoader running in the tray.
  app.on('window-all-closed', () => undefined);
  return true;
}

let current: Shell | undefined;

async function setupConfig(): Promise<Shell> {
  const userData = app.getPath('userData');
  const config = await loadShellConfig(userData, defaultShellConfig(userData, homedir()));
  current = { config, host: null, tray: null, window: null, mount: null, last: null, error: null };
  return current;
}

/** Start at login is opt-in (the owner ticks it in the menu); hidden, straight to the tray. */
function setupStartAtLogin(s: Shell): void {
  app.setLoginItemSettings({ openAtLogin: s.config.startAtLogin, openAsHidden: true });
}

/** The daemon in this process, with owner input from the desktop session's idle time. */
async function setupAgent(s: Shell): Promise<void> {
  const logger = pino(
    { level: 'info' },
    pino.destination({ dest: join(app.getPath('logs'), 'agent.log'), mkdir: true, sync: false }),
  );
  try {
    s.host = await AgentHost.start({
      agent: {
        dir: s.config.dir,
        listenHost: '0.0.0.0',
        listenPort: DEFAULT_AGENT_PORT,
        idleSource: async () => powerMonitor.getSystemIdleTime() * 1000,
        logger,
      },
      settings: {},
    });
  } catch (e) {
    s.error = `FreeLoader could not start: ${e instanceof Error ? e.message : String(e)}`;
    notify('FreeLoader', s.error);
  }
}

/** Tray icon, tooltip and menu, refreshed every second from the agent's state. */
function setupTray(s: Shell): void {
  s.tray = new Tray(icon('offline'));
  let lastMenu = '';
  const refresh = async (): Promise<void> => {
    const state = (await s.host?.client?.state().catch(() => null)) ?? null;
    if (state && s.last) {
      const n = notificationFor(s.last, state);
      if (n) notify(n.title, n.body);
    }
    s.last = state ?? s.last;
    const f = facts(s, state);
    s.tray!.setImage(icon(trayState(f)));
    s.tray!.setToolTip(tooltip(f));
    const model = menuModel(f);
    // Rebuilt only when it changed: rebuilding closes a menu the owner has open on some desktops.
    if (JSON.stringify(model) !== lastMenu) {
      lastMenu = JSON.stringify(model);
      s.tray!.setContextMenu(Menu.buildFromTemplate(template(model, (a) => void act(s, a))));
    }
  };
  void refresh();
  setInterval(() => void refresh(), REFRESH_MS).unref();
}

/** First run (not enrolled) or "start minimized" off: show the settings window at once. */
function setupFirstWindow(s: Shell): void {
  if (!s.config.startMinimized || s.last?.enrolled === false || !s.host?.daemon) openSettings(s);
}

/** Quit stops serving cleanly (in-flight reads finish) and unmounts the drive. */
function setupQuit(s: Shell): void {
  let stopping = false;
  app.on('before-quit', (event) => {
    if (stopping) return;
    stopping = true;
    event.preventDefault();
    s.mount?.kill('SIGTERM');
    void (s.host?.stop() ?? Promise.resolve()).finally(() => app.exit(0));
  });
}

function facts(s: Shell, state: LocalState | null): ShellFacts {
  return {
    state,
    error: s.error,
    mounted: s.mount !== null,
    startAtLogin: s.config.startAtLogin,
    consoleUrl: state?.managerUrl ?? null,
  };
}

async function act(s: Shell, action: MenuAction): Promise<void> {
  switch (action) {
    case 'open-settings':
      return openSettings(s);
    case 'pause-1h':
    case 'pause-tomorrow':
    case 'pause-indefinite':
      await s.host?.client?.pause(
        action.slice('pause-'.length) as '1h' | 'tomorrow' | 'indefinite',
      );
      return;
    case 'resume':
      await s.host?.client?.resume();
      return;
    case 'open-console':
      if (s.last?.managerUrl) await shell.openExternal(s.last.managerUrl);
      return;
    case 'mount':
      return mountDrive(s);
    case 'unmount':
      s.mount?.kill('SIGTERM');
      return;
    case 'toggle-login':
      s.config = { ...s.config, startAtLogin: !s.config.startAtLogin };
      await saveShellConfig(app.getPath('userData'), s.config);
      setupStartAtLogin(s);
      return;
    case 'quit':
      app.quit();
  }
}

/** The settings page the daemon serves, in a window of our own (hidden, not closed, on close). */
function openSettings(s: Shell): void {
  if (!s.host?.settings) return;
  if (!s.window || s.window.isDestroyed()) {
    s.window = new BrowserWindow({
      width: 960,
      height: 900,
      title: 'FreeLoader settings',
      webPreferences: { contextIsolation: true, sandbox: true, nodeIntegration: false },
    });
    void s.window.loadURL(s.host.settings.openUrl);
  }
  s.window.show();
  s.window.focus();
}

/**
 * `freeloader mount` as a child process on Electron's own Node (ELECTRON_RUN_AS_NODE); it uses
 * the CLI's signed-in session (`freeloader login`) and unmounts when it is told to stop.
 */
function mountDrive(s: Shell): void {
  if (s.mount || !s.last?.managerUrl) return;
  const child = spawn(
    process.execPath,
    [CLI, 'mount', s.config.mountDir, '--manager', s.last.managerUrl],
    {
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      stdio: ['ignore', 'ignore', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.on('data', (b: Buffer) => (stderr = (stderr + b.toString()).slice(-2000)));
  child.once('exit', (code) => {
    s.mount = null;
    if (code)
      notify('FreeLoader drive', stderr.trim().split('\n').pop() ?? `mount exited with ${code}`);
  });
  s.mount = child;
}

function template(
  items: MenuItemModel[],
  onAction: (a: MenuAction) => void,
): MenuItemConstructorOptions[] {
  return items.map((i) => ({
    type: i.type ?? 'normal',
    ...(i.label !== undefined ? { label: i.label } : {}),
    ...(i.enabled !== undefined ? { enabled: i.enabled } : {}),
    ...(i.checked !== undefined ? { checked: i.checked } : {}),
    ...(i.submenu ? { submenu: template(i.submenu, onAction) } : {}),
    ...(i.action ? { click: () => onAction(i.action!) } : {}),
  }));
}

function icon(state: Parameters<typeof trayIconPng>[0]): Electron.NativeImage {
  const image = nativeImage.createFromBuffer(trayIconPng(state, 16));
  image.addRepresentation({ scaleFactor: 2, buffer: trayIconPng(state, 32) });
  return image;
}

function notify(title: string, body: string): void {
  if (Notification.isSupported()) new Notification({ title, body }).show();
}

void main();
