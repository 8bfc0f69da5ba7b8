import { FreeLoaderError } from '@freeloader/protocol';

/** A candidate donor as the width choice sees it: is its owner using the machine right now? */
export interface DonorActivity {
  id: string;
  /** Owner active, native workload contending, or serving paused/throttled. */
  active: boolean;
}

export interface WidthInput {
  /** The stripe width asked for (or the default). */
  requested: number;
  /** Candidates in the order placement would take them (most free space first). */
  donors: readonly DonorActivity[];
  /**
   * How much less each donor serves once the stripe is widened for an active owner: the width
   * becomes `factor × requested` (default 2), so an active donor serves at most half of what
   * it would have.
   */
  factor?: number;
  /** Width below which a slowed donor still costs the client much (seed Fig. 12: 6). */
  minWidth?: number;
  /** Hard ceiling (the protocol's MAX_STRIPE_WIDTH). */
  maxWidth?: number;
}

export interface WidthChoice {
  width: number;
  /** Active donors among the first `requested` candidates. */
  active: number;
  widened: boolean;
}

/** Seed 000 Fig. 12: beyond a width of 6, one slowed donor no longer costs the client much. */
export const MIN_IMPACT_WIDTH = 6;
/** Default widening factor when an owner is active. */
export const IMPACT_WIDEN_FACTOR = 2;

/**
 * High-level impact control (seed 000 §3.1, §5.4, Fig. 12): when the stripe would include donors
 * whose owners are active, widen it. A wider stripe lowers the share — and so the request rate —
 * each donor serves, which shortens and softens the slowdown an owner sees, and the client loses
 * less to a throttled donor; the seed measured both falling steadily with width, the client's
 * loss vanishing above a width of 6. With no active donor in the stripe the width is unchanged,
 * and it never exceeds the candidates available.
 *
 * @example
 *   chooseWidth({ requested: 4, donors: [a, b, c(active), d, e, f, g, h, i, j] })
 *   // c is among the first 4 → width max(2 × 4, 6) = 8: each donor serves 1/8 instead of 1/4
 *   chooseWidth({ requested: 4, donors: [a, b, c, d, e(active)] }) // → 4 (e is not in the stripe)
 */
export function chooseWidth(input: WidthInput): WidthChoice {
  const {
    requested,
    donors,
    factor = IMPACT_WIDEN_FACTOR,
    minWidth = MIN_IMPACT_WIDTH,
    maxWidth = Infinity,
  } = input;
  if (!Number.isSafeInteger(requested) || requested < 1 || !(factor >= 1)) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'width choice: requested ≥ 1 and factor ≥ 1');
  }
  const base = Math.min(requested, donors.length, maxWidth);
  const active = donors.slice(0, base).filter((d) => d.active).length;
  if (active === 0) return { width: base, active, widened: false };
  const wanted = Math.max(Math.ceil(requested * factor), minWidth);
  const width = Math.max(base, Math.min(wanted, donors.length, maxWidth));
  return { width, active, widened: width > base };
}
