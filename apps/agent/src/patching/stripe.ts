import type { SuffixPlan } from '@freeloader/protocol';

/**
 * The stripe slot (index into the plan's nodes) that serves morsel `index` of a suffix starting
 * at `first`: the suffix is striped one morsel at a time over the p patching nodes.
 *
 * @example ownerSlot(12, 10, 3) === 2
 */
export function ownerSlot(index: number, first: number, width: number): number {
  return (index - first) % width;
}

/** How many morsels of [first, end) slot `slot` of `width` serves. */
export function ownedCount(first: number, end: number, width: number, slot: number): number {
  const n = end - first;
  return slot < n ? Math.floor((n - slot - 1) / width) + 1 : 0;
}

/**
 * The source requests of slot `slot`, as morsel ranges [from, to): the suffix is cut into
 * requests of `requestSize` bytes, handed out round-robin (request r to slot r mod p).
 *
 * @example requestsOf({ firstMorsel: 10, endMorsel: 20, requestSize: 4 * M, nodes: [a, b] }, M, 1)
 *   // → [[14, 18]]
 */
export function requestsOf(
  plan: Pick<SuffixPlan, 'firstMorsel' | 'endMorsel' | 'requestSize' | 'nodes'>,
  morselSize: number,
  slot: number,
): Array<[number, number]> {
  const per = Math.max(1, Math.floor(plan.requestSize / morselSize));
  const out: Array<[number, number]> = [];
  const width = plan.nodes.length;
  for (let r = slot; plan.firstMorsel + r * per < plan.endMorsel; r += width) {
    const from = plan.firstMorsel + r * per;
    out.push([from, Math.min(plan.endMorsel, from + per)]);
  }
  return out;
}
