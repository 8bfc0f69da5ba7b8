import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  DEFAULT_GOVERNOR_SETTINGS,
  mergeSettings,
  type GovernorSettings,
} from './governor-settings.js';
import type { Pause } from './pause.js';

/** What `<dir>/governor.json` holds: the owner's governor settings and any pause in force. */
export interface GovernorFile {
  settings: GovernorSettings;
  pause: Pause | null;
}

const FILE = 'governor.json';

/** Load the governor file; defaults when absent. Unknown or invalid content is an error. */
export async function loadGovernorFile(dir: string): Promise<GovernorFile> {
  let raw: Partial<GovernorFile>;
  try {
    raw = JSON.parse(await readFile(join(dir, FILE), 'utf8')) as Partial<GovernorFile>;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') {
      return { settings: DEFAULT_GOVERNOR_SETTINGS, pause: null };
    }
    throw e;
  }
  return {
    settings: mergeSettings(DEFAULT_GOVERNOR_SETTINGS, raw.settings ?? {}),
    pause: raw.pause ?? null,
  };
}

/** Write the governor file atomically (temp file + rename). */
export async function saveGovernorFile(dir: string, file: GovernorFile): Promise<void> {
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${FILE}.tmp`);
  await writeFile(tmp, JSON.stringify(file, null, 2) + '\n');
  await rename(tmp, join(dir, FILE));
}
