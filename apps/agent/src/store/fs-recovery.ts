import { open, readdir, readFile, rename, stat, truncate } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encodeRecord, RECORD_SIZE, replayLog } from './index-log.js';
import {
  datasetPaths,
  META_SUFFIX,
  parseMeta,
  syncDir,
  touch,
  unlinkIfExists,
  type DatasetMeta,
  type DatasetPaths,
} from './fs-layout.js';
import { assertDatasetId } from './validate.js';
import { SlotTable } from './slot-table.js';

/** Rewrite a log holding this many times more records than live morsels (plus a floor). */
const COMPACT_RATIO = 2;
const COMPACT_FLOOR = 1024;

export interface RecoveredDataset {
  meta: DatasetMeta;
  table: SlotTable;
  /** Where the next index record goes. */
  logEnd: number;
  /** Morsels the index held whose bytes were gone (data file missing or short): dropped. */
  lost: number[];
}

export interface RecoveredEntry extends RecoveredDataset {
  id: string;
  paths: DatasetPaths;
}

/**
 * Recover every dataset of a store's datasets directory. Leftover `.tmp` files go; data and index
 * files without a meta file (a create or free that did not finish) go; files that are not ours
 * stay, with a warning.
 */
export async function recoverStore(
  datasetsDir: string,
  warn: (message: string) => void,
): Promise<RecoveredEntry[]> {
  const names = await readdir(datasetsDir);
  const withMeta = new Set<string>();
  const found: RecoveredEntry[] = [];
  for (const name of names) {
    if (name.endsWith('.tmp')) await unlinkIfExists(join(datasetsDir, name));
    if (!name.endsWith(META_SUFFIX)) continue;
    const id = name.slice(0, -META_SUFFIX.length);
    try {
      assertDatasetId(id);
    } catch {
      warn(`ignored ${name}: not a dataset id`);
      continue;
    }
    withMeta.add(id);
    const paths = datasetPaths(datasetsDir, id);
    const got = await recoverDataset(paths, id, warn);
    if (got) found.push({ id, paths, ...got });
  }
  for (const name of names) {
    const m = /^(.+)\.(data|idx)$/.exec(name);
    if (m && !withMeta.has(m[1]!)) await unlinkIfExists(join(datasetsDir, name));
  }
  return found;
}

/**
 * Rebuild one dataset from disk: reservations from the meta file, then the index log replayed in
 * order. A torn or corrupt tail is cut off; morsels whose record never committed are simply
 * absent, so their slots are free again; data past the last slot in use is truncated away; a log
 * mostly made of dead records is rewritten compactly. Returns undefined for an unreadable meta file.
 */
export async function recoverDataset(
  paths: DatasetPaths,
  datasetId: string,
  warn: (message: string) => void,
): Promise<RecoveredDataset | undefined> {
  const meta = parseMeta(await readFile(paths.meta, 'utf8'), datasetId);
  if (!meta) {
    warn(`dataset ${datasetId}: unreadable meta file, skipped`);
    return undefined;
  }
  const table = new SlotTable();
  for (const run of meta.planned) table.reserve(run);
  // Measured before touch(): a deleted data file must not come back as an empty one that looks valid.
  const dataSize = await sizeOrZero(paths.data);
  await touch(paths.idx);
  await touch(paths.data);

  const fh = await open(paths.idx, 'r+');
  let logEnd: number;
  let lost: number[];
  try {
    const { size } = await fh.stat();
    const result = await replayLog(fh, (rec) => table.apply(rec));
    logEnd = result.goodLength;
    if (result.badRecords > 0) {
      warn(`dataset ${datasetId}: skipped ${result.badRecords} torn or corrupt index record(s)`);
    }
    if (size > logEnd) {
      await fh.truncate(logEnd);
      await fh.datasync();
    }
    lost = dropUnbacked(table, meta.morselSize, dataSize);
    if (lost.length > 0) {
      warn(
        `dataset ${datasetId}: data file ${dataSize === 0 ? 'missing or empty' : `short (${dataSize} bytes)`}, ` +
          `dropped ${lost.length} morsel(s) its index held`,
      );
    }
    // Dropped morsels must stay dropped across the next restart too: rewrite the log without them.
    if (lost.length > 0 || result.records > COMPACT_RATIO * table.entries.size + COMPACT_FLOOR) {
      logEnd = await compactLog(paths.idx, table);
    }
  } finally {
    await fh.close();
  }
  table.rebuildSpare();

  const needed = table.slotCount * meta.morselSize;
  if (dataSize > needed) await truncate(paths.data, needed);
  return { meta, table, logEnd, lost };
}

/**
 * Remove from `table` every morsel whose slot reaches past the data file's end (its bytes are
 * gone); returns their indices, ascending.
 *
 * @example
 *   // morselSize 4, a 6-byte data file: morsel 7 in slot 0 (bytes 0–3) is whole, morsel 9 in
 *   // slot 1 (bytes 4–7) is not
 *   dropUnbacked(table, 4, 6) // → [9]
 */
export function dropUnbacked(table: SlotTable, morselSize: number, dataSize: number): number[] {
  const lost = [...table.entries]
    .filter(([, e]) => e.slot * morselSize + e.length > dataSize)
    .map(([index]) => index)
    .sort((a, b) => a - b);
  for (const index of lost) table.apply({ kind: 'free', index });
  return lost;
}

async function sizeOrZero(path: string): Promise<number> {
  try {
    return (await stat(path)).size;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return 0;
    throw e;
  }
}

/** Replace the log by one put record per live morsel (atomic rename); returns its length. */
async function compactLog(idxPath: string, table: SlotTable): Promise<number> {
  const tmp = `${idxPath}.tmp`;
  const records = [...table.entries.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, e]) => encodeRecord({ kind: 'put', index, ...e }));
  const fh = await open(tmp, 'w', 0o600);
  try {
    if (records.length > 0) await fh.writeFile(Buffer.concat(records));
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, idxPath);
  await syncDir(dirname(idxPath));
  return records.length * RECORD_SIZE;
}
