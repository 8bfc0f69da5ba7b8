import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FreeLoaderError } from '@freeloader/protocol';

/** What an agent learns at enrollment and keeps across restarts (mode 0600: it holds a secret). */
export interface Identity {
  agentId: string;
  credential: string;
  managerUrl: string;
  managerPublicKey: string;
  /**
   * The manager's CA certificate (PEM), pinned at enrollment by the join token's fingerprint:
   * the only CA trusted for the manager afterwards. Absent for tokens without a fingerprint
   * (the system's roots are trusted then).
   */
  managerCa?: string;
  name: string;
  enrolledAt: string;
}

export function identityPath(dir: string): string {
  return join(dir, 'identity.json');
}

export async function loadIdentity(dir: string): Promise<Identity | null> {
  let text: string;
  try {
    text = await readFile(identityPath(dir), 'utf8');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const id = JSON.parse(text) as Partial<Identity>;
  if (!id.agentId || !id.credential || !id.managerUrl || !id.managerPublicKey) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `${identityPath(dir)} is incomplete; remove it to enroll again with a new join token`,
    );
  }
  return id as Identity;
}

/** Write atomically (temp + rename) so a crash never leaves a half-written identity. */
export async function saveIdentity(dir: string, id: Identity): Promise<void> {
  const path = identityPath(dir);
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, JSON.stringify(id, null, 2) + '\n', { mode: 0o600 });
  await chmod(tmp, 0o600);
  await rename(tmp, path);
}
