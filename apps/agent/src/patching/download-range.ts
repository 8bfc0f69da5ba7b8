import { FreeLoaderError, isFreeLoaderError, morselLength } from '@freeloader/protocol';
import type { Source, SourceInfo } from '@freeloader/sources';

/** Attempts per request before the patch gives up on the source. */
export const REQUEST_ATTEMPTS = 3;
/** Errors a retry cannot cure: the source is another version, or refuses ranges. */
const FATAL = new Set(['SOURCE_CHANGED', 'RANGE_NOT_SUPPORTED', 'CAPABILITY_INVALID']);

export interface RangeStats {
  requests: number;
  /** Milliseconds from issuing the first request to its first byte. */
  firstByteMs: number | undefined;
  /** Milliseconds with a request open. */
  activeMs: number;
  bytes: number;
}

/**
 * Download morsels [from, to) with ONE contiguous Range request (seed 002 §3.2: large requests
 * amortise the source's per-request cost) and hand each morsel to `onMorsel` as soon as its
 * bytes are in; awaiting `onMorsel` back-pressures the stream. A transient failure resumes with
 * a new request from the first morsel not yet delivered; SOURCE_CHANGED is final.
 *
 * @example await downloadRange(src, info, 64, 128, MiB, async (i, data) => push(i, data), stats);
 */
export async function downloadRange(
  source: Source,
  expect: SourceInfo,
  from: number,
  to: number,
  morselSize: number,
  onMorsel: (index: number, data: Buffer) => Promise<void>,
  stats: RangeStats,
  signal?: AbortSignal,
): Promise<void> {
  let next = from;
  for (let attempt = 1; next < to; attempt++) {
    const started = performance.now();
    try {
      const start = next * morselSize;
      const end = Math.min(expect.size, to * morselSize);
      stats.requests++;
      const stream = await source.streamRange(start, end, expect, signal);
      let current: Buffer | undefined;
      let filled = 0;
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        stats.firstByteMs ??= performance.now() - started;
        let at = 0;
        while (at < chunk.length) {
          current ??= Buffer.allocUnsafe(morselLength(expect.size, morselSize, next));
          const n = Math.min(chunk.length - at, current.length - filled);
          chunk.copy(current, filled, at, at + n);
          filled += n;
          at += n;
          stats.bytes += n;
          if (filled === current.length) {
            const index = next++;
            const data = current;
            current = undefined;
            filled = 0;
            await onMorsel(index, data);
          }
        }
      }
      if (next < to) {
        throw new FreeLoaderError('SOURCE_ERROR', `source ended the range at morsel ${next}`);
      }
    } catch (e) {
      signal?.throwIfAborted();
      const err = isFreeLoaderError(e) ? e : new FreeLoaderError('SOURCE_ERROR', String(e));
      if (FATAL.has(err.code) || attempt >= REQUEST_ATTEMPTS) throw err;
      // The partial morsel is dropped; the next request starts at its first byte.
    } finally {
      stats.activeMs += performance.now() - started;
    }
  }
}
