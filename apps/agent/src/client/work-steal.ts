/**
 * Work stealing over copies for the unordered read: before each request a donor takes a queued
 * morsel of a twin (another donor it holds that morsel's copy with) when the twin would finish
 * its queue later than the donor would with that morsel added — as aria2c hands pieces to
 * whichever peer is free. It takes from the donor that would finish last, the last morsel of its
 * queue the thief holds. Stealing only once a queue ran out was too late: on a round-robin
 * layout a donor's twins are its neighbours, so a fast donor's spare capacity reached the rest
 * one neighbour at a time (8 donors, one twice as fast: 64 steps either way in a simulation;
 * stealing whenever ahead spreads it along the chain as the read goes).
 */

/** What a thief needs to know about the other queues. */
export interface StealView {
  /** Each donor's queued (not yet asked) morsels, in the order it would ask for them. */
  queues: ReadonlyMap<string, readonly number[]>;
  /** Whether `donor` may serve morsel `index` now (holds a copy as healthy as the best). */
  canServe: (donor: string, index: number) => boolean;
  /**
   * A donor's delivery rate (bytes/s), or undefined while unknown: two donors are compared by
   * their rates only when both are known, else by queue lengths alone.
   */
  rate: (donor: string) => number | undefined;
  /** Morsels a donor took and has not delivered (they finish before its queue moves). */
  inFlight: (donor: string) => number;
}

/**
 * Queued morsels a thief looks through at the end of one victim's queue: enough for the twins of
 * a round-robin layout (a donor shares every other morsel with each neighbour), bounded so a
 * steal never scans a whole large queue.
 */
export const STEAL_SCAN = 64;

/**
 * The morsel `thief` should take now, and from whom: the last morsel the thief can serve of the
 * queue that would finish last, when that queue would finish later than the thief's with the
 * morsel added (then the move can never be undone by a steal back); undefined when no move helps.
 *
 * @example
 *   // A has 4 queued, B none; both hold everything, rates unknown: B takes A's last, 3.
 *   stealFor('B', { queues: new Map([['A', [0, 1, 2, 3]], ['B', []]]),
 *     canServe: () => true, rate: () => undefined, inFlight: () => 0 }); // { victim: 'A', index: 3, at: 3 }
 */
export function stealFor(
  thief: string,
  view: StealView,
): { victim: string; index: number; at: number } | undefined {
  const load = (d: string): number => (view.queues.get(d)?.length ?? 0) + view.inFlight(d);
  const thiefRate = view.rate(thief);
  // The victim's finish time against the thief's with the morsel added: in seconds when both
  // rates are known, else in morsels.
  const gain = (victim: string): number => {
    const r = view.rate(victim);
    const [rv, rt] = r !== undefined && thiefRate !== undefined ? [r, thiefRate] : [1, 1];
    return load(victim) / Math.max(rv, 1e-9) - (load(thief) + 1) / Math.max(rt, 1e-9);
  };
  const victims = [...view.queues]
    .filter(([d, q]) => d !== thief && q.length > 0)
    .map(([d, q]) => ({ d, q, gain: gain(d) }))
    .filter((v) => v.gain > 0)
    .sort((a, b) => b.gain - a.gain);
  for (const { d, q } of victims) {
    for (let at = q.length - 1; at >= Math.max(0, q.length - STEAL_SCAN); at--) {
      if (view.canServe(thief, q[at]!)) return { victim: d, index: q[at]!, at };
    }
  }
  return undefined;
}
