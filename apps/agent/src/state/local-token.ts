import { randomBytes } from 'node:crypto';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/**
 * The control API's per-run token and URL files in the state directory: written at start, read
 * by the tray and scripts.
 */

/** Where the local settings token is written (mode 0600) in the agent's state directory. */
export const TOKEN_FILE = 'settings-token';
/** Where the settings URL (without the token) is written, for the tray and scripts. */
export const URL_FILE = 'settings-url';

/**
 * A fresh random token for this run, written to `<dir>/settings-token` readable by the owner
 * only. Anything on the machine that can read that file may change the agent's settings —
 * which is exactly the owner's processes.
 */
export async function issueLocalToken(dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const token = randomBytes(24).toString('base64url');
  const path = join(dir, TOKEN_FILE);
  await writeFile(path, token + '\n', { mode: 0o600 });
  // writeFile's mode applies only when it creates the file; an older one keeps its mode.
  await chmod(path, 0o600);
  return token;
}

/** Write the settings URL next to the token (no secret in it). */
export async function writeSettingsUrl(dir: string, url: string): Promise<void> {
  await writeFile(join(dir, URL_FILE), url + '\n', { mode: 0o644 });
}
