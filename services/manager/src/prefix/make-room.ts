import { FreeLoaderError, formatSize } from '@freeloader/protocol';
import { planEviction, type EvictionStep } from '@freeloader/striping';
import { withTransaction, type Queryable } from '../db/pool.js';
import type { EvictionCause } from '../repositories/evictions.js';
import { extensionReservations } from '../repositories/reservations.js';
import { getPlacement } from '../repositories/placement.js';
import { advisoryXactLock } from '../repositories/prefix-evictions.js';
import { abandonExtensionIn } from './abandon-extension.js';
import type { PrefixDb } from './deps.js';
import { evictionEntries } from './eviction.js';
import { clipExtents, trimDatasetIn, type TrimResult } from './trim-dataset.js';
import type { Extent } from '@freeloader/protocol';

/** Extra free bytes per donor that a plan may count on (space a cut would give back). */
export type ExtraFree = ReadonlyMap<string, number>;

/**
 * Whether `bytes` of the import can be placed when each donor has `extra` more free bytes than
 * the ledger shows. Only NO_SPACE means "no": any other error is the import's own and propagates.
 */
export type Fits = (bytes: number, extra: ExtraFree) => Promise<boolean>;

/** One way to make room: what to give up, and the per-donor space it returns. */
export interface RoomOption {
  /** Bytes the import will cache with this room (the whole dataset or its model prefix). */
  cacheBytes: number;
  /** Abandon the prefix extensions in flight (speculative space nobody asked for). */
  abandonExtensions: boolean;
  /** The first `steps` eviction steps (trims, then whole evictions, by LRU). */
  steps: number;
}

export interface RoomMade {
  cacheBytes: number;
  /** The space the cuts give back per donor (what a dry run plans with). */
  extra: ExtraFree;
  /** Datasets whose extension in flight was abandoned. */
  abandoned: string[];
  cuts: TrimResult[];
}

/**
 * Key of the transaction-level advisory lock that serialises room-making decisions: two imports
 * that both need eviction never count the same reclaimable space twice.
 */
const MAKE_ROOM_LOCK = 0x46_4c_52_4d; // "FLRM"

/**
 * Sum per-donor maps.
 *
 * @example addFree(new Map([['a', 1]]), new Map([['a', 2], ['b', 3]])) // → a: 3, b: 3
 */
export function addFree(...maps: ExtraFree[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of maps) for (const [k, v] of m) out.set(k, (out.get(k) ?? 0) + v);
  return out;
}

/**
 * The least an import has to give up, in the seed's order of preference (seed 002 §4.1, with
 * prefix extensions yielded first since nobody asked for them): the whole dataset once in-flight
 * extensions are abandoned; else its model prefix as is, with extensions abandoned, then with the
 * fewest eviction steps that make it fit. `freedAfter[k]` is the per-donor space the first k
 * steps give back (index 0: none). Null when even every step is not enough: then nothing may be
 * cut. Placement is monotone in free space, so the fewest steps are found by bisection (a few
 * planner runs, not one per cached dataset).
 *
 * @example await chooseRoom({ whole: 10, target: 4, extensions: new Map(), freedAfter: [new Map()], fits })
 *   // → { cacheBytes: 4, abandonExtensions: false, steps: 0 } when 4 bytes fit as is
 */
export async function chooseRoom(input: {
  whole: number;
  target: number;
  extensions: ExtraFree;
  freedAfter: readonly ExtraFree[];
  fits: Fits;
}): Promise<RoomOption | null> {
  const { whole, target, extensions, freedAfter, fits } = input;
  const none: ExtraFree = new Map();
  const hasExtensions = extensions.size > 0;
  // The caller found that the whole dataset does not fit as is; these cut no cached data.
  const cheap: RoomOption[] = [];
  if (hasExtensions) cheap.push({ cacheBytes: whole, abandonExtensions: true, steps: 0 });
  if (target < whole) {
    cheap.push({ cacheBytes: target, abandonExtensions: false, steps: 0 });
    if (hasExtensions) cheap.push({ cacheBytes: target, abandonExtensions: true, steps: 0 });
  }
  for (const option of cheap) {
    if (await fits(option.cacheBytes, option.abandonExtensions ? extensions : none)) return option;
  }
  const withSteps = (k: number) => addFree(extensions, freedAfter[k] ?? none);
  const all = freedAfter.length - 1;
  if (all < 1 || !(await fits(target, withSteps(all)))) return null;
  // Zero steps do not fit (tried above); `all` do. Bisect for the fewest that do.
  let lo = 0;
  let hi = all;
  while (hi - lo > 1) {
    const mid = (lo + hi) >> 1;
    if (await fits(target, withSteps(mid))) hi = mid;
    else lo = mid;
  }
  return { cacheBytes: target, abandonExtensions: hasExtensions, steps: hi };
}

/**
 * Per-donor space given back after each prefix of eviction steps, following each dataset's
 * placement through its trim and then its eviction. Index k: the first k steps.
 */
async function freedAfterSteps(db: Queryable, steps: readonly EvictionStep[], morsel: MorselOf) {
  const current = new Map<string, Extent[]>();
  const out: Map<string, number>[] = [new Map<string, number>()];
  let running = new Map<string, number>();
  for (const step of steps) {
    const info = morsel(step.id);
    const extents = current.get(step.id) ?? (await getPlacement(db, step.id));
    const keep = Math.floor(Math.max(0, step.toBytes) / info.morselSize);
    const { extents: kept, freed } = clipExtents(extents, keep, info.sizeBytes, info.morselSize);
    current.set(step.id, kept);
    running = addFree(running, freed);
    out.push(running);
  }
  return out;
}

type MorselOf = (id: string) => { sizeBytes: number; morselSize: number };

/**
 * Decide what an import that does not fit gives up, and give it up, in one transaction: the
 * decision is a dry run of the import's own placement against the space each cut would return,
 * so a dataset is trimmed or evicted only for an import that will then fit. When nothing can make
 * it fit, nothing is touched and the import fails with NO_SPACE (which says so). A dry run
 * decides and touches nothing.
 *
 * @example await makeRoom(deps, { whole: 10 * GiB, target: 10 * GiB, morselSize: MiB, fits })
 */
export async function makeRoom(
  deps: PrefixDb,
  input: { whole: number; target: number; fits: Fits; dryRun?: boolean; cause?: EvictionCause },
): Promise<RoomMade> {
  return withTransaction(deps.pg, async (tx) => {
    await advisoryXactLock(tx, MAKE_ROOM_LOCK);
    const extensions = await extensionReservations(tx);
    const extensionFree = addFree(...extensions.values());
    const entries = await evictionEntries(deps);
    const steps = planEviction(entries, Number.MAX_SAFE_INTEGER).steps;
    const sizes = new Map(entries.map((e) => [e.id, e]));
    const freedAfter = await freedAfterSteps(tx, steps, (id) => sizes.get(id)!);
    const option = await chooseRoom({ ...input, extensions: extensionFree, freedAfter });
    if (!option) {
      const reclaimable = [...addFree(extensionFree, freedAfter.at(-1)!).values()].reduce(
        (s, b) => s + b,
        0,
      );
      throw new FreeLoaderError(
        'NO_SPACE',
        `the cache cannot hold ${formatSize(input.target)} even after evicting every unpinned ` +
          `dataset (${formatSize(reclaimable)} could be freed on live donors); nothing was evicted`,
        { neededBytes: input.target, reclaimableBytes: reclaimable },
      );
    }
    const extra = addFree(
      option.abandonExtensions ? extensionFree : new Map(),
      freedAfter[option.steps]!,
    );
    if (input.dryRun) return { cacheBytes: option.cacheBytes, extra, abandoned: [], cuts: [] };
    const abandoned: string[] = [];
    if (option.abandonExtensions) {
      for (const id of extensions.keys()) {
        if (await abandonExtensionIn(tx, id)) abandoned.push(id);
      }
    }
    const cuts: TrimResult[] = [];
    for (const step of steps.slice(0, option.steps)) {
      const cut = await trimDatasetIn(tx, step.id, step.toBytes, input.cause);
      if (cut) cuts.push(cut);
    }
    return { cacheBytes: option.cacheBytes, extra, abandoned, cuts };
  });
}
