import { open, rename, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { PlannedRun } from './slot-table.js';

/**
 * On-disk layout of the filesystem store:
 *   <dir>/datasets/<id>.meta.json   dataset exists iff this exists (written atomically)
 *   <dir>/datasets/<id>.data        fixed-size slots, morselSize bytes each
 *   <dir>/datasets/<id>.idx         append-only index log (see index-log.ts)
 * Ids are validated UUIDs before they reach a path.
 */
export interface DatasetPaths {
  meta: string;
  data: string;
  idx: string;
}

export const DATASETS_DIR = 'datasets';
export const META_SUFFIX = '.meta.json';

export function datasetPaths(datasetsDir: string, datasetId: string): DatasetPaths {
  const base = join(datasetsDir, datasetId);
  return { meta: `${base}${META_SUFFIX}`, data: `${base}.data`, idx: `${base}.idx` };
}

export interface DatasetMeta {
  version: 1;
  datasetId: string;
  morselSize: number;
  /** Slot reservations in index order, see {@link PlannedRun}. */
  planned: PlannedRun[];
}

/** Parse a meta file's text; undefined when it is not a meta file we wrote. */
export function parseMeta(text: string, datasetId: string): DatasetMeta | undefined {
  let meta: Partial<DatasetMeta>;
  try {
    meta = JSON.parse(text) as Partial<DatasetMeta>;
  } catch {
    return undefined;
  }
  const runsOk =
    Array.isArray(meta.planned) &&
    meta.planned.every(
      (r) =>
        Array.isArray(r) && r.length === 4 && r.every((n) => Number.isSafeInteger(n) && n >= 0),
    );
  if (meta.version !== 1 || meta.datasetId !== datasetId || !runsOk) return undefined;
  if (!Number.isInteger(meta.morselSize)) return undefined;
  return meta as DatasetMeta;
}

/** Write a file so that readers see either the old or the new content, durably. */
export async function writeFileAtomic(path: string, text: string): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(text);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  await syncDir(join(path, '..'));
}

/** Create an empty file if missing (never truncates an existing one). */
export async function touch(path: string): Promise<void> {
  const fh = await open(path, 'a', 0o600);
  await fh.close();
}

/** fsync a directory so renames and unlinks in it survive a crash. */
export async function syncDir(dir: string): Promise<void> {
  const fh = await open(dir, 'r');
  try {
    await fh.sync();
  } finally {
    await fh.close();
  }
}

export async function unlinkIfExists(path: string): Promise<void> {
  try {
    await unlink(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}
