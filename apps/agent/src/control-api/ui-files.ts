import { readFile } from 'node:fs/promises';
import { extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Where `npm run build` puts the settings UI (apps/agent/settings-ui/dist), seen from dist/. */
export const DEFAULT_UI_DIR = fileURLToPath(new URL('../../settings-ui/dist', import.meta.url));

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.json': 'application/json',
};

/**
 * One built UI file by its URL path ('/' is index.html); undefined when there is none. Only
 * plain names inside the UI directory and its `assets/` folder are served: no traversal.
 */
export async function uiFile(
  uiDir: string,
  urlPath: string,
): Promise<{ body: Buffer; type: string } | undefined> {
  const path = urlPath === '/' ? '/index.html' : urlPath;
  const m = /^\/(?:(assets)\/)?([\w][\w.-]*)$/.exec(path);
  if (!m) return undefined;
  try {
    const body = await readFile(join(uiDir, m[1] ?? '', m[2]!));
    return { body, type: TYPES[extname(m[2]!)] ?? 'application/octet-stream' };
  } catch {
    return undefined;
  }
}
