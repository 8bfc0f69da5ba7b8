import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Owner settings the agent remembers across restarts (no secrets here). */
export interface AgentSettings {
  quotaBytes?: number;
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
