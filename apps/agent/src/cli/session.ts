import { readFile } from 'node:fs/promises';
import { FreeLoaderError, MANAGER_OUTAGE_PATIENCE_MS } from '@freeloader/protocol';
import { ManagerClient, normalizeManagerUrl } from '../manager-client.js';
import { adminPasswordPath, cliSessionPath, localManagerCaPath } from './paths.js';

/** What `freeloader login` remembers (mode 0600). */
export interface SavedSession {
  managerUrl: string;
  token: string;
  username: string;
  /** The https:// manager's CA (PEM) the login pinned: the only one trusted for it. */
  managerCa?: string;
}

export async function readSavedSession(): Promise<SavedSession | null> {
  try {
    return JSON.parse(await readFile(cliSessionPath(), 'utf8')) as SavedSession;
  } catch {
    return null;
  }
}

/**
 * A manager client signed in as a user, from (in order) `FREELOADER_TOKEN`, the session saved by
 * `freeloader login` for this manager, or — on the manager's own machine — the first admin's
 * password file. Fails with a message that says how to sign in. An https:// manager is
 * trusted by the CA the login pinned, else (on its own machine) by the CA in its home.
 */
export async function userClient(managerUrl: string): Promise<ManagerClient> {
  const saved = await readSavedSession();
  const matches = saved !== null && saved.managerUrl === normalizeManagerUrl(managerUrl);
  // A login's choice stands (no CA: the system's roots); else the local manager's own CA.
  const ca = matches
    ? saved.managerCa
    : await readFile(localManagerCaPath(), 'utf8').catch(() => undefined);
  const client = new ManagerClient(managerUrl, undefined, { ca });
  const envToken = process.env.FREELOADER_TOKEN;
  if (envToken) {
    client.setCredentials({ kind: 'user', token: envToken });
    return client;
  }
  if (saved && matches) {
    client.setCredentials({ kind: 'user', token: saved.token });
    return client;
  }
  const password = await readFile(adminPasswordPath(), 'utf8').catch(() => null);
  if (password) {
    const res = await client.request<{ token: string }>('POST', '/auth/login', {
      username: 'admin',
      password: password.trim(),
    });
    client.setCredentials({ kind: 'user', token: res.token });
    return client;
  }
  await client.close();
  throw new FreeLoaderError(
    'UNAUTHENTICATED',
    `not signed in to ${client.baseUrl}: run \`freeloader login --manager ${client.baseUrl}\``,
  );
}

/**
 * Let a long command (`import --wait`, `get`) ride out a manager restart or database outage:
 * its reads are retried for up to MANAGER_OUTAGE_PATIENCE_MS, with one line on stderr per
 * outage (on a line of its own, below any progress bar).
 */
export function rideOutManagerOutages(client: ManagerClient): void {
  client.rideOutOutages({
    patienceMs: MANAGER_OUTAGE_PATIENCE_MS,
    say: (line) => console.error(`\n${line}`),
  });
}
