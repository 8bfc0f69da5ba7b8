import {
  dataKeyOf,
  morselLength,
  morselsOfDonor,
  type ImportJobPayload,
  type MorselHash,
} from '@freeloader/protocol';
import type { Source, SourceInfo } from '@freeloader/sources';
import { forEachBounded } from './bounded-tasks.js';
import { fanOutImport, type FanOutCounts, type SourceMorsel } from './fan-out-import.js';
import { IMPORT_CONCURRENCY, type ImportDeps } from './import-deps.js';
import type { JobContext } from './job-runner.js';
import { ProgressReporter } from './progress-reporter.js';
import { sealInPlace } from '../native/morsel-cipher.js';

/**
 * This donor's morsels, split: `fromSource` (copy 0, or any copy when the job has no fan-out)
 * and `fannedOut` (copies ≥ 1 it copies from copy 0's donor), each ascending.
 *
 * @example
 *   splitMorsels({ extents: [copy 0 → 'me' for 0..1, copy 1 → 'me' for 2..3], fanOut }, 'me')
 *   // → { fromSource: [0, 1], fannedOut: [2, 3] }
 */
export function splitMorsels(
  payload: Pick<ImportJobPayload, 'extents' | 'fanOut'>,
  me: string,
): { fromSource: number[]; fannedOut: number[] } {
  const direct = new Set<number>();
  const fanned = new Set<number>();
  for (const e of payload.extents) {
    const into = e.copy > 0 && payload.fanOut ? fanned : direct;
    for (const m of morselsOfDonor(e, me)) into.add(m);
  }
  const asc = (s: Set<number>): number[] => [...s].sort((a, b) => a - b);
  return { fromSource: asc(direct), fannedOut: asc(fanned) };
}

/**
 * Import from a source that honours Range: this donor fetches the morsels the placement assigns
 * to it as copy 0 from the source, IMPORT_CONCURRENCY requests in flight, and stores each as it
 * lands (the store hashes while it writes). Then, with a fan-out, it copies the morsels it holds
 * later copies of from copy 0's donors (fan-out-import.ts): the source serves each morsel about
 * once. Its own copy-0 morsels go first, so no two donors ever wait on each other.
 */
export async function rangedImport(
  deps: ImportDeps,
  job: { id: string; datasetId: string },
  payload: ImportJobPayload,
  source: Source,
  expect: SourceInfo,
  ctx: JobContext,
): Promise<Record<string, unknown>> {
  const { datasetId } = job;
  const me = deps.agentId();
  const split = splitMorsels(payload, me);
  const fan = deps.manager && payload.fanOut ? split.fannedOut : [];
  const direct = fan.length > 0 ? split.fromSource : [...split.fromSource, ...split.fannedOut];
  await deps.store.create(datasetId, {
    morselSize: payload.morselSize,
    planned: [...direct, ...fan].sort((a, b) => a - b),
  });
  const size = payload.source.size;
  const reporter = new ProgressReporter(ctx);
  // One morsel buffer per worker, reused: a 1 MiB allocation per morsel left agents at
  // 140–220 MB resident after a 1 GiB import (garbage the GC had no pressure to collect).
  const slots: Buffer[] = [];
  // Encrypted dataset: donors store (and hash) the sealed bytes only.
  const key = payload.dataKey === undefined ? undefined : dataKeyOf(payload.dataKey);
  /**
   * Morsel `index` from the source into `slot`, sealed in place when the dataset is encrypted
   * (with the AES-GCM tag, hex, to report beside its hash).
   */
  const fromSource = async (index: number, slot: Buffer): Promise<SourceMorsel> => {
    const start = index * payload.morselSize;
    const end = start + morselLength(size, payload.morselSize, index);
    const data = await source.readRange(start, end, expect, ctx.signal, slot);
    // Sealing is deterministic (nonce from the morsel index): a fan-out's fallback to the source
    // stores the very ciphertext copy 0's donor stored, and matches its hash.
    if (!key) return { data };
    return { data, tag: sealInPlace(key, datasetId, index, data).toString('hex') };
  };
  // Every worker stops before the job fails, so no put lands after the failure frees morsels.
  await forEachBounded(direct, IMPORT_CONCURRENCY, async (index, lane) => {
    ctx.signal.throwIfAborted();
    const slot = (slots[lane] ??= Buffer.allocUnsafeSlow(payload.morselSize));
    // Before the request: the owner feels bytes on the wire, not bytes already here.
    await deps.admit?.(morselLength(size, payload.morselSize, index), 'in', ctx.signal);
    const { data, tag } = await fromSource(index, slot);
    // The store hashes while it writes; hashing here too doubled an import's CPU.
    const { sha256 } = await deps.store.put(datasetId, index, data);
    reporter.add(data.length, { index, sha256, ...(tag ? { tag } : {}) } satisfies MorselHash);
  });
  let fanned: FanOutCounts = { fromDonors: 0, fromSource: 0 };
  if (fan.length > 0) {
    // Reported now, so the donors copying from this one need not wait for the job's end.
    await reporter.flush();
    fanned = await fanOutImport(
      { ...deps, manager: deps.manager! },
      {
        jobId: job.id,
        datasetId,
        payload: { ...payload, fanOut: payload.fanOut! },
        slots,
        fromSource,
        reporter,
      },
      fan,
      ctx,
    );
  }
  await reporter.flush();
  return {
    morsels: direct.length + fan.length,
    bytes: reporter.doneBytes,
    sourceMorsels: direct.length + fanned.fromSource,
    fannedOut: fanned.fromDonors,
  };
}
