import { donorsOfMorsel, type DatasetMap } from '@freeloader/protocol';
import { slowness } from './prefer-fast.js';
import { DonorDrops } from './donor-drops.js';
import { RecentFailures } from './recent-failures.js';
import { isUnreachable } from './unreachable-donor.js';
import { STALL_EPISODE_MS, STALLS_TO_DROP } from './stall-watch.js';

/**
 * A copy other than the map's first is asked first only when that one would answer at least this
 * many times later (a frozen, throttled or slower donor, or one with a queue). Choosing on any
 * difference in expected wait, as before, spread an in-order reader's morsels over both copies
 * by momentary queue lengths, and the morsel the reader needed next often sat behind a donor's
 * later ones: `dd` through the mount at W=8 on the LAN reached 0.630 of the link with two copies
 * per morsel and 0.972 with one (256 MiB, three samples each).
 */
export const WAIT_SWITCH_FACTOR = 2;

/**
 * Where to read one morsel from:
 * - `donors`: its cached copies, best first (the reader tries each, then the source);
 * - `patching`: the uncached suffix, served by a patching node (seed 002); `node` is the one
 *   serving it now, '' when the suffix is read from the source directly;
 * - `source`: no donor holds it, so only the source can deliver it.
 */
export type MorselPlace =
  { kind: 'donors'; copies: string[] } | { kind: 'patching'; node: string } | { kind: 'source' };

/**
 * The patched suffix as the locator sees it ({@link SuffixReader} is one). `covers` also tells
 * the suffix reader it is in use (it keeps its patching sessions alive while it is).
 */
export interface PatchedSuffix {
  covers(index: number): boolean;
  nodeOf(index: number): string;
  arrivalOrder(indices: readonly number[]): number[];
}

/** How a read may route around donors. */
export interface LocatorOptions {
  /**
   * The dataset has a source to fall back to. Then a donor the map does not call live (dead,
   * stale/offline) or one dropped for stalling is never offered: its morsels go to the next copy
   * or the source at once, without a connection attempt. Without a source such donors stay as
   * the last resort (the only route left may be a donor the manager briefly lost touch with).
   */
  sourceBacked?: boolean;
  /**
   * Seconds a new request to `donor` would take to finish now: its queue at this reader over the
   * rate measured in this read (or predicted). Given, it decides between equally healthy copies
   * instead of the predicted rate alone, so reads spread over every copy by speed and load
   * rather than piling onto the fastest donor.
   */
  wait?: (donor: string) => number;
  /** The clock failures and stalls are timed by (milliseconds; tests set it). */
  now?: () => number;
}

/**
 * The one place a read decides where each morsel comes from, so adding places (more copies per
 * morsel, repair, other tiers) changes this file and not the reader. Copies are ranked by
 * health: usable (live, not dropped) donors first, then fewest failures in this read, then
 * unthrottled, then the faster copy by the manager's predicted rate ({@link slowness}). Donors
 * the map gives no address for are never offered, nor copies the map or this read found bad
 * (`badCopies`, a bad hash), nor, when the source backs the read, donors that are not live or
 * were dropped for stalling.
 *
 * @example
 *   // Two full copies of 4 morsels: copy 0 on A, copy 1 on B; suffix 4…8 patched by P and Q.
 *   const locator = new MorselLocator(map, suffix);
 *   locator.locate(2); // { kind: 'donors', copies: ['A', 'B'] }
 *   locator.failed('A');
 *   locator.locate(2); // { kind: 'donors', copies: ['B', 'A'] }
 *   locator.locate(5); // { kind: 'patching', node: 'Q' }
 *   locator.readOrder(6); // [0, 1, 2, 3, 4, 5] (suffix in arrival order after the prefix)
 */
export class MorselLocator {
  /** Donors the map gives an address for: the only ones that can be asked. */
  private readonly known = new Set<string>();
  private readonly usable = new Set<string>();
  /** Donors whose governor slows their serving (owner active, contended, paused). */
  private readonly throttled = new Set<string>();
  /** Delivery rate the manager predicts for each donor to this client (bytes/s), when known. */
  private readonly predicted = new Map<string, number>();
  /** Failures of each donor lately: they rank it behind its twins for a while, not for good. */
  private readonly failures: RecentFailures;
  /** Stalls in a row per donor and when the last counted one was ({@link stalled}). */
  private readonly stalls = new Map<string, { count: number; at: number }>();
  /** Donors that stalled STALLS_TO_DROP times in a row or lost a hedge: out for a while. */
  private readonly dropped: DonorDrops;
  private readonly now: () => number;
  /** `morsel:donor` of copies known bad (the map's badCopies, or a bad hash in this read). */
  private readonly bad = new Set<string>();

  constructor(
    private readonly map: Pick<DatasetMap, 'extents' | 'donors' | 'badCopies'>,
    private readonly suffix?: PatchedSuffix,
    private readonly opts: LocatorOptions = {},
  ) {
    this.now = opts.now ?? (() => performance.now());
    this.failures = new RecentFailures(this.now);
    this.dropped = new DonorDrops(this.now);
    for (const d of map.donors) {
      this.known.add(d.id);
      if (d.state === 'live') this.usable.add(d.id);
      if (d.throttle && d.throttle !== 'idle' && d.throttle !== 'unknown') this.throttled.add(d.id);
      if (d.rate) this.predicted.set(d.id, d.rate);
    }
    for (const b of map.badCopies ?? []) this.bad.add(`${b.morsel}:${b.donor}`);
  }

  /** Where morsel `index` is read from now (the ranking follows failures reported so far). */
  locate(index: number): MorselPlace {
    if (this.suffix?.covers(index)) return { kind: 'patching', node: this.suffix.nodeOf(index) };
    const all = donorsOfMorsel(this.map.extents, index);
    const speed = this.opts.wait ? this.byWait(all, this.opts.wait) : undefined;
    const score = (d: string): number =>
      this.health(d) + (speed ? speed(d) : slowness(d, all, this.predicted));
    const copies = all
      .filter((d) => this.known.has(d) && !this.bad.has(`${index}:${d}`))
      .filter((d) => !this.opts.sourceBacked || this.contactable(d))
      .sort((a, b) => score(a) - score(b));
    return copies.length > 0 ? { kind: 'donors', copies } : { kind: 'source' };
  }

  /**
   * Split morsels over the donors that should serve them when each donor works through its own
   * queue (`readUnordered`): each morsel goes to the healthiest of its copies, and among equally
   * healthy copies to the one whose queue would finish first at its rate (measured, else
   * predicted, else all equal), so a dataset with n copies is read from all of them.
   *
   * @example locator.spread([0, 1, 2, 3], () => 1) // two copies on A and B: A → [0, 2], B → [1, 3]
   */
  spread(indices: readonly number[], rate: (donor: string) => number): Map<string, number[]> {
    const queues = new Map<string, number[]>();
    const finish = (d: string) => ((queues.get(d)?.length ?? 0) + 1) / Math.max(rate(d), 1e-9);
    for (const i of indices) {
      const place = this.locate(i);
      const copies = placeNodes(place);
      const best = copies.length > 0 ? this.health(copies[0]!) : 0;
      const equal = copies.filter((d) => this.health(d) === best);
      const donor =
        place.kind === 'donors' && equal.length > 0
          ? equal.reduce((a, b) => (finish(b) < finish(a) ? b : a))
          : (copies[0] ?? '');
      let q = queues.get(donor);
      if (!q) queues.set(donor, (q = []));
      q.push(i);
    }
    return queues;
  }

  /** The manager's predicted delivery rate of `donor` to this client (bytes/s), when known. */
  predictedRate(donor: string): number | undefined {
    return this.predicted.get(donor);
  }

  /**
   * Health rank of a copy, lower is better: +1000 not contactable, +1 per failure in the last
   * FAILURE_MEMORY_MS, +0.5 throttled. Copies of equal rank are interchangeable but for speed
   * and load.
   */
  health(d: string): number {
    return (
      (this.contactable(d) ? 0 : 1000) + this.failures.count(d) + (this.throttled.has(d) ? 0.5 : 0)
    );
  }

  /**
   * Changes whenever any donor's health may have (a failure, one forgotten, a drop): a read that
   * dealt its morsels by health deals them again.
   */
  healthVersion(): number {
    return this.failures.version() + this.dropped.version();
  }

  /**
   * A tie-breaker in [0, 0.25): 0 for every copy that would finish within WAIT_SWITCH_FACTOR of
   * the first (those keep the map's order, copy 0 first), more the later a copy would finish.
   */
  private byWait(copies: readonly string[], wait: (d: string) => number): (d: string) => number {
    const waits = new Map(copies.map((d) => [d, wait(d)]));
    const longest = Math.max(...waits.values());
    const soonest = Math.min(...waits.values());
    return (d) => {
      const w = waits.get(d)!;
      return longest > 0 && w >= WAIT_SWITCH_FACTOR * soonest ? 0.249 * (w / longest) : 0;
    };
  }

  /** A donor failed a request (dead, stalled, bad hash): it goes behind healthier copies. */
  failed(donor: string): void {
    this.failures.add(donor);
  }

  /**
   * A request to `donor` failed with `error`: when that says nothing answers at its address
   * ({@link isUnreachable}), it is left out for the rest of the read. True when that is news.
   */
  unreachable(donor: string, error: unknown): boolean {
    return isUnreachable(error) && this.dropped.dropForRead(donor);
  }

  /** `donor` delivered a morsel: its stalls so far were not in a row, it is not stopped. */
  delivered(donor: string): void {
    this.stalls.delete(donor);
    this.dropped.delivered(donor);
  }

  /** `donor` sent morsel `index` with a bad hash: never ask it for that morsel again in this read. */
  badCopy(index: number, donor: string): void {
    this.bad.add(`${index}:${donor}`);
  }

  /**
   * `donor` stalled (a morsel outstanding far longer than its recent latency, or beaten by a
   * hedge to the source); returns true when that drops it for the first time in the read
   * (worth telling the user): STALLS_TO_DROP stalls in a row, at
   * least STALL_EPISODE_MS apart (the morsels of one stop count once). A morsel delivered in
   * between ({@link delivered}) starts the count again.
   */
  stalled(donor: string): boolean {
    if (this.dropped.isDropped(donor)) return false;
    const now = this.now();
    const s = this.stalls.get(donor) ?? { count: 0, at: -Infinity };
    if (now - s.at < STALL_EPISODE_MS) return false;
    this.stalls.set(donor, { count: s.count + 1, at: now });
    if (s.count + 1 < STALLS_TO_DROP) return false;
    this.stalls.delete(donor);
    return this.dropped.drop(donor);
  }

  /**
   * Leave `donor` out for a while ({@link DonorDrops}: 3 s, doubling while it drops again without
   * delivering): it lost a hedge to a twin, or an earlier read of the same mount dropped it.
   * True at its first drop in the read.
   */
  drop(donor: string): boolean {
    return this.dropped.drop(donor);
  }

  isDropped(donor: string): boolean {
    return this.dropped.isDropped(donor);
  }

  /** Donors dropped now. */
  droppedNow(): string[] {
    return this.dropped.everDropped().filter((d) => this.dropped.isDropped(d));
  }

  /** Donors dropped at some point of the read, in the order of their first drop. */
  droppedDonors(): string[] {
    return this.dropped.everDropped();
  }

  /** Live in the map and not dropped: a donor worth a connection. */
  private contactable(donor: string): boolean {
    return this.usable.has(donor) && !this.dropped.isDropped(donor);
  }

  /**
   * Morsels 0…count−1 in the order an out-of-order read should ask for them: index order, except
   * that a patched suffix goes the way its patching nodes download it (seed 002).
   */
  readOrder(count: number): number[] {
    const all = Array.from({ length: count }, (_, i) => i);
    return this.suffix ? this.suffix.arrivalOrder(all) : all;
  }
}

/**
 * The donors (or patching node) a place names, best first: what `DatasetReader.candidates`
 * reports.
 *
 * @example placeNodes({ kind: 'patching', node: 'P' }) // → ['P']
 */
export function placeNodes(place: MorselPlace): string[] {
  switch (place.kind) {
    case 'donors':
      return place.copies;
    case 'patching':
      return [place.node];
    case 'source':
      return [];
  }
}
