import { FreeLoaderError } from '@freeloader/protocol';

/**
 * The seed's overlap model for a host client reading a dataset split between its own disk and
 * remote donors (seed 000 §5.2.1, Fig. 9): both parts are read at once, so the read takes as long
 * as the slower part.
 *
 *   thpt = (size_l + size_r) / max(size_l / thpt_l, size_r / thpt_r)
 *
 * Sizes may be in any unit (morsels, bytes, or the parts of a ratio); rates in one unit (the
 * result is in it too).
 *
 * @example
 *   modelThroughput(3, 8, 60, 95)  // 3:8 with 60 MB/s local, 95 MB/s remote → 11/max(0.05, 0.084) ≈ 130.6
 *   modelThroughput(1, 0, 60, 95)  // local only → 60
 *   modelThroughput(0, 8, 60, 95)  // remote only → 95
 */
export function modelThroughput(
  sizeLocal: number,
  sizeRemote: number,
  thptLocal: number,
  thptRemote: number,
): number {
  check(sizeLocal >= 0 && sizeRemote >= 0 && sizeLocal + sizeRemote > 0, 'sizes');
  check(thptLocal >= 0 && thptRemote >= 0, 'rates');
  const time = Math.max(part(sizeLocal, thptLocal), part(sizeRemote, thptRemote));
  return time === 0 ? Infinity : (sizeLocal + sizeRemote) / time;
}

/**
 * The local fraction size_l / (size_l + size_r) at which both parts finish together — the
 * model's peak, where it equals thpt_l + thpt_r.
 *
 * @example optimalLocalShare(60, 95) // 60 / 155 ≈ 0.387 (a 3:8 cycle is 0.273, 5:8 is 0.385)
 */
export function optimalLocalShare(thptLocal: number, thptRemote: number): number {
  check(thptLocal >= 0 && thptRemote >= 0 && thptLocal + thptRemote > 0, 'rates');
  return thptLocal / (thptLocal + thptRemote);
}

/** Seconds (or whatever unit) one part takes; an empty part takes none, a dead path forever. */
function part(size: number, rate: number): number {
  if (size === 0) return 0;
  return rate === 0 ? Infinity : size / rate;
}

/** NaN fails every comparison above, so it lands here too. */
function check(ok: boolean, what: string): void {
  if (!ok) {
    throw new FreeLoaderError('VALIDATION_FAILED', `throughput model: invalid ${what}`);
  }
}
