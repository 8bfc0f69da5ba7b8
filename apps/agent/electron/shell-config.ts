import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** What the tray shell remembers in `<userData>/freeloader-tray.json`. */
export interface ShellConfig {
  /** The agent's state directory (identity, settings, morsel store). */
  dir: string;
  /** Start with the computer (opt-in: off until the owner ticks it). */
  startAtLogin: boolean;
  /** Stay in the tray at start instead of opening the settings window. */
  startMinimized: boolean;
  /** Where "Mount drive" mounts the namespace. */
  mountDir: string;
}

const FILE = 'freeloader-tray.json';

/** Defaults for a first start, under the OS's per-user app data and home directories. */
export function defaultShellConfig(userData: string, home: string): ShellConfig {
  return {
    dir: join(userData, 'agent'),
    startAtLogin: false,
    startMinimized: true,
    mountDir: join(home, 'FreeLoader'),
  };
}

/**
 * Merge a stored config over the defaults, keeping only well-typed known fields (a damaged file
 * must not stop the tray from starting).
 *
 * @example parseShellConfig('{"startAtLogin":true,"x":1}', d) // → { ...d, startAtLogin: true }
 */
export function parseShellConfig(text: string, defaults: ShellConfig): ShellConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return defaults;
  }
  const o = (raw ?? {}) as Record<string, unknown>;
  const str = (k: keyof ShellConfig) =>
    typeof o[k] === 'string' && o[k] !== '' ? o[k] : undefined;
  const bool = (k: keyof ShellConfig) => (typeof o[k] === 'boolean' ? o[k] : undefined);
  return {
    dir: str('dir') ?? defaults.dir,
    startAtLogin: bool('startAtLogin') ?? defaults.startAtLogin,
    startMinimized: bool('startMinimized') ?? defaults.startMinimized,
    mountDir: str('mountDir') ?? defaults.mountDir,
  };
}

export async function loadShellConfig(
  userData: string,
  defaults: ShellConfig,
): Promise<ShellConfig> {
  try {
    return parseShellConfig(await readFile(join(userData, FILE), 'utf8'), defaults);
  } catch {
    return defaults;
  }
}

export async function saveShellConfig(userData: string, config: ShellConfig): Promise<void> {
  await mkdir(userData, { recursive: true });
  const tmp = join(userData, `${FILE}.tmp`);
  await writeFile(tmp, JSON.stringify(config, null, 2) + '\n');
  await rename(tmp, join(userData, FILE));
}
