import { setTimeout as sleep } from 'node:timers/promises';
import {
  MAX_HASHES_PER_QUERY,
  donorsOfMorsel,
  morselLength,
  type ImportHashesResponse,
  type ImportJobPayload,
} from '@freeloader/protocol';
import { DonorPools } from '../client/donor-pool.js';
import { forEachBounded } from './bounded-tasks.js';
import { IMPORT_CONCURRENCY, type ImportDeps } from './import-deps.js';
import type { JobContext } from './job-runner.js';
import type { ProgressReporter } from './progress-reporter.js';

/** How often a fan-out asks the manager which of its morsels copy 0's donors stored (ms). */
const HASH_POLL_MS = 250;
/**
 * With no morsel of copy 0 stored anywhere for this long, the rest come from the source
 * (milliseconds): long enough for the manager to declare a dead donor dead and re-place its
 * share (whose new donor then reports the hashes), short enough that an import never hangs.
 */
const PRIMARY_PATIENCE_MS = 5 * 60_000;

/** Where a fan-out's morsels came from. */
export interface FanOutCounts {
  fromDonors: number;
  fromSource: number;
}

/** A morsel read from the source: its bytes (sealed when encrypted) and then its tag, hex. */
export interface SourceMorsel {
  data: Buffer;
  tag?: string;
}

/** What a fan-out needs from the ranged import that runs it. */
export interface FanOutJob {
  jobId: string;
  datasetId: string;
  payload: ImportJobPayload & { fanOut: NonNullable<ImportJobPayload['fanOut']> };
  /** One morsel buffer per lane (shared with the ranged import). */
  slots: Buffer[];
  /** Read morsel `index` from the source into `slot` (sealed when the dataset is encrypted). */
  fromSource(index: number, slot: Buffer): Promise<SourceMorsel>;
  reporter: ProgressReporter;
}

/**
 * Windows of at most MAX_HASHES_PER_QUERY morsels covering every index in `sorted` (ascending):
 * what one poll asks the manager for.
 *
 * @example hashWindows([0, 2, 5000], 4096) // → [{ first: 0, count: 3 }, { first: 5000, count: 1 }]
 */
export function hashWindows(
  sorted: readonly number[],
  max = MAX_HASHES_PER_QUERY,
): { first: number; count: number }[] {
  const out: { first: number; count: number }[] = [];
  for (const m of sorted) {
    const last = out.at(-1);
    if (last && m < last.first + max) last.count = m - last.first + 1;
    else out.push({ first: m, count: 1 });
  }
  return out;
}

/**
 * Copies ≥ 1 without the WAN (issue 15; ThriftStore §3.2: the source seeds one copy, donors fan
 * out): for each morsel this donor holds a later copy of, wait until the manager has its hash
 * (copy 0's donor stored it and said so), copy it from that donor with the fan-out read
 * capability, and store it only if it matches that hash. A morsel the donor cannot deliver
 * (dead, paused, corrupt) comes from the source, checked against the same hash, and so does one
 * whose copy-0 donor the manager says died mid-import (at once, without waiting for its hash);
 * when copy 0 makes no progress for PRIMARY_PATIENCE_MS, the rest come from the source.
 */
export async function fanOutImport(
  deps: ImportDeps & { manager: NonNullable<ImportDeps['manager']> },
  job: FanOutJob,
  morsels: readonly number[],
  ctx: JobContext,
): Promise<FanOutCounts> {
  const { datasetId, payload } = job;
  const fan = payload.fanOut;
  const urls = new Map(fan.donors.map((d) => [d.id, d.url]));
  const pools = new DonorPools(2);
  const counts: FanOutCounts = { fromDonors: 0, fromSource: 0 };
  const lengthOf = (index: number): number =>
    morselLength(payload.source.size, payload.morselSize, index);
  const primaryOf = (index: number): string => donorsOfMorsel(fan.primaries, index)[0] ?? '';
  let lostNow: ReadonlySet<string> = new Set();

  const copy = async (index: number, sha256: string | undefined, lane: number): Promise<void> => {
    const slot = (job.slots[lane] ??= Buffer.allocUnsafeSlow(payload.morselSize));
    const length = lengthOf(index);
    await deps.admit?.(length, 'in', ctx.signal);
    const url = urls.get(primaryOf(index));
    if (url && sha256 && !lostNow.has(primaryOf(index))) {
      try {
        const data = await pools.getMorsel(url, datasetId, index, length, fan.readCapability, slot);
        await deps.store.put(datasetId, index, data, sha256);
        counts.fromDonors++;
        job.reporter.add(length, { index, sha256 });
        return;
      } catch (e) {
        if (ctx.signal.aborted) throw e;
        ctx.log.warn({ morsel: index, donor: url, err: String(e) }, 'fan-out copy from source');
      }
    }
    const { data, tag } = await job.fromSource(index, slot);
    const stored = await deps.store.put(datasetId, index, data, sha256);
    counts.fromSource++;
    // Its tag too: copy 0's donor may never report this morsel (it died before storing it).
    job.reporter.add(length, { index, sha256: stored.sha256, ...(tag ? { tag } : {}) });
  };

  const pending = new Set(morsels);
  let heardAt = performance.now();
  try {
    while (pending.size > 0) {
      ctx.signal.throwIfAborted();
      const sorted = [...pending].sort((a, b) => a - b);
      const { known, lost } = await storedHashes(deps.manager, job.jobId, sorted);
      lostNow = lost;
      // Copy 0's donor died: what it stored is gone with it, the source has it now.
      const orphans = sorted.filter((m) => lost.has(primaryOf(m)) && !known.has(m));
      const ready: [number, string | undefined][] = [
        ...known,
        ...orphans.map((m): [number, undefined] => [m, undefined]),
      ];
      if (ready.length > 0) {
        heardAt = performance.now();
        await forEachBounded(ready, IMPORT_CONCURRENCY, async ([index, sha256], lane) => {
          await copy(index, sha256, lane);
          pending.delete(index);
        });
        continue;
      }
      if (performance.now() - heardAt > PRIMARY_PATIENCE_MS) {
        ctx.log.warn({ morsels: pending.size }, 'copy 0 stalled: fan-out falls back to the source');
        await forEachBounded([...pending], IMPORT_CONCURRENCY, (index, lane) =>
          copy(index, undefined, lane),
        );
        break;
      }
      await sleep(HASH_POLL_MS, undefined, { signal: ctx.signal });
    }
  } finally {
    await pools.close();
  }
  return counts;
}

/**
 * The morsels among `sorted` whose hash the manager holds, with that hash, and the donors that
 * died during the import.
 */
async function storedHashes(
  manager: NonNullable<ImportDeps['manager']>,
  jobId: string,
  sorted: readonly number[],
): Promise<{ known: Map<number, string>; lost: Set<string> }> {
  const wanted = new Set(sorted);
  const known = new Map<number, string>();
  const lost = new Set<string>();
  for (const w of hashWindows(sorted)) {
    const res = await manager.request<ImportHashesResponse>(
      'GET',
      `/jobs/${jobId}/hashes?first=${w.first}&count=${w.count}`,
    );
    res.hashes.forEach((sha256, i) => {
      if (sha256 !== '' && wanted.has(res.first + i)) known.set(res.first + i, sha256);
    });
    for (const id of res.lost ?? []) lost.add(id);
  }
  return { known, lost };
}
