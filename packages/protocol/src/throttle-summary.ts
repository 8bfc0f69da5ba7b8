// Dependency-free (the console bundles it from source): why donors are throttled, summarized
// the same way for the CLI's progress line and the console's badges.

/** Governor states that slow a donor down below what it could serve. */
const THROTTLED_STATES: ReadonlySet<string> = new Set(['active', 'contended', 'paused']);

/**
 * Is a donor in this governor state held back (owner active, machine busy, or paused)?
 *
 * @example isThrottled('contended') // → true;  isThrottled('idle') // → false
 */
export function isThrottled(state: string | null | undefined): boolean {
  return state != null && THROTTLED_STATES.has(state);
}

/** A donor's serving governor as views carry it (map donors, agent views, transfer rows). */
export interface DonorThrottle {
  throttle?: string | undefined;
  throttleReasons?: readonly string[] | undefined;
  /** Bytes/s; 0 or absent = unlimited. */
  rateCap?: number | undefined;
}

/** Words for a throttled state when an older agent sent no reasons. */
const STATE_WORDS: Record<string, string> = {
  active: 'owner active',
  contended: 'machine busy',
  paused: 'paused',
};

/**
 * Why one donor is throttled, in a few words.
 *
 * @example donorReasons({ throttle: 'contended', throttleReasons: ['cpu 0.93 > 0.75'] }) // → 'cpu 0.93 > 0.75'
 */
export function donorReasons(d: DonorThrottle): string {
  if (d.throttleReasons?.length) return d.throttleReasons.join(', ');
  return STATE_WORDS[d.throttle ?? ''] ?? d.throttle ?? 'throttled';
}

/** How many of a set of donors are throttled, and the commonest reason. */
export interface ThrottleSummary {
  throttled: number;
  total: number;
  /** The commonest kind of reason, in its first wording ('cpu 0.93 > 0.75'). */
  reason: string;
  /** Distinct kinds of reason besides that one. */
  others: number;
}

/** What a reason is about, without its numbers: 'cpu 0.93 > 0.75' and 'cpu 0.97 > 0.75' agree. */
const kindOf = (reason: string): string => reason.replace(/[\d.]+/g, '#');

/**
 * Summarize the donors doing some work (a read's map donors, an import's running jobs): null
 * when none is throttled.
 *
 * @example
 *   summarizeThrottle([{ throttle: 'contended', throttleReasons: ['cpu 0.93 > 0.75'] }, {}])
 *   // → { throttled: 1, total: 2, reason: 'cpu 0.93 > 0.75', others: 0 }
 */
export function summarizeThrottle(donors: readonly DonorThrottle[]): ThrottleSummary | null {
  const throttled = donors.filter((d) => isThrottled(d.throttle));
  if (throttled.length === 0) return null;
  const kinds = new Map<string, { text: string; count: number }>();
  for (const d of throttled) {
    const reasons = d.throttleReasons?.length ? d.throttleReasons : [donorReasons(d)];
    for (const r of reasons) {
      const k = kinds.get(kindOf(r)) ?? { text: r, count: 0 };
      k.count++;
      kinds.set(kindOf(r), k);
    }
  }
  const ranked = [...kinds.values()].sort((a, b) => b.count - a.count);
  return {
    throttled: throttled.length,
    total: donors.length,
    reason: ranked[0]!.text,
    others: ranked.length - 1,
  };
}
