import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * `<dir>/settings.json`: what the owner gave on the command line or the settings page that the
 * agent remembers across restarts (the donated space), so later starts may omit it. No secrets
 * here; the governor's settings have their own file (`governor.json`).
 */
export interface AgentSettings {
  quotaBytes?: number;
  /** The scrub's pace (`--scrub-period`, `--scrub-rate`); absent: the defaults. */
  scrub?: {
    /** A full pass per this many milliseconds. */
    periodMs?: number;
    /** A fixed rate in bytes/s, or 'max' for as fast as the disk allows. */
    bytesPerSecond?: number | 'max';
  };
}

const FILE = 'settings.json';

export async function loadSettings(dir: string): Promise<AgentSettings> {
  try {
    return JSON.parse(await readFile(join(dir, FILE), 'utf8')) as AgentSettings;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return {};
    throw e;
  }
}

export async function saveSettings(dir: string, settings: AgentSettings): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${FILE}.tmp`);
  await writeFile(tmp, JSON.stringify(settings, null, 2) + '\n');
  await rename(tmp, join(dir, FILE));
}
