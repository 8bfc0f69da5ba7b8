import { describe, expect, it } from 'vitest';
import type { DatasetMap, Extent } from '@freeloader/protocol';
import {
  MorselLocator,
  placeNodes,
  type MorselPlace,
  WAIT_SWITCH_FACTOR,
  type PatchedSuffix,
} from './morsel-locator.js';
import { DROP_FIRST_MS } from './donor-drops.js';
import { FAILURE_MEMORY_MS } from './recent-failures.js';
import { STALL_EPISODE_MS } from './stall-watch.js';

const A = 'a';
const B = 'b';
const C = 'c';

type Donor = DatasetMap['donors'][number];
const live = (id: string, extra: Partial<Donor> = {}): Donor => ({
  id,
  url: `http://${id}`,
  state: 'live',
  ...extra,
});

/** Morsels 0…3 in two copies: copy 0 on A, copy 1 on B. */
const twoCopies: Extent[] = [0, 1].map((copy) => ({
  copy,
  first: 0,
  count: 4,
  unit: 1,
  phase: 0,
  donors: [copy === 0 ? A : B],
}));

/** Morsels 4…7 patched by P and Q, one-morsel requests, arrival order reversed to be visible. */
function suffix(nodes: string[]): PatchedSuffix & { touched: number[] } {
  const touched: number[] = [];
  return {
    touched,
    covers: (i) => {
      touched.push(i);
      return i >= 4 && i < 8;
    },
    nodeOf: (i) => (nodes.length > 0 ? nodes[(i - 4) % nodes.length]! : ''),
    arrivalOrder: (all) => [...all.filter((i) => i < 4), ...all.filter((i) => i >= 4).reverse()],
  };
}

describe('MorselLocator.locate', () => {
  it.each<[string, Donor[], string[], number, MorselPlace]>([
    ['primary first when nothing is known', [live(A), live(B)], [], 2, donors(A, B)],
    [
      'the faster copy first',
      [live(A, { rate: 5e6 }), live(B, { rate: 50e6 })],
      [],
      2,
      donors(B, A),
    ],
    [
      'an unthrottled copy beats a faster throttled one',
      [live(A, { rate: 5e6 }), live(B, { rate: 50e6, throttle: 'active' })],
      [],
      2,
      donors(A, B),
    ],
    [
      'a live copy beats a faster stale one',
      [live(A, { rate: 5e6 }), live(B, { rate: 50e6, state: 'stale' })],
      [],
      2,
      donors(A, B),
    ],
    ['a donor that failed goes behind the other copy', [live(A), live(B)], [A], 2, donors(B, A)],
    ['fewest failures first', [live(A), live(B)], [A, B, B], 2, donors(A, B)],
    [
      'a failed live donor still beats a stale one',
      [live(A), live(B, { state: 'stale' })],
      [A, A],
      2,
      donors(A, B),
    ],
    ['a donor without an address is never offered', [live(B)], [], 2, donors(B)],
    ['no copy with an address: the source', [live(C)], [], 2, { kind: 'source' }],
    ['outside every extent: the source', [live(A), live(B)], [], 5, { kind: 'source' }],
  ])('%s', (_, mapDonors, failures, index, want) => {
    const locator = new MorselLocator({ extents: twoCopies, donors: mapDonors });
    for (const d of failures) locator.failed(d);
    expect(locator.locate(index)).toEqual(want);
  });

  it.each<[string, string[], number, MorselPlace]>([
    ['the suffix goes to its patching node', ['P', 'Q'], 5, { kind: 'patching', node: 'Q' }],
    ['round robin over the nodes', ['P', 'Q'], 6, { kind: 'patching', node: 'P' }],
    ['no node left: patching from the source', [], 4, { kind: 'patching', node: '' }],
    ['the prefix still comes from donors', ['P', 'Q'], 1, donors(A, B)],
  ])('%s', (_, nodes, index, want) => {
    const s = suffix(nodes);
    const locator = new MorselLocator({ extents: twoCopies, donors: [live(A), live(B)] }, s);
    expect(locator.locate(index)).toEqual(want);
    // Asking is what keeps the suffix reader's sessions alive.
    expect(s.touched).toEqual([index]);
  });
});

describe('MorselLocator with a source behind it', () => {
  const locate = (mapDonors: Donor[], index = 2, setup?: (l: MorselLocator) => void) => {
    const locator = new MorselLocator({ extents: twoCopies, donors: mapDonors }, undefined, {
      sourceBacked: true,
    });
    setup?.(locator);
    return locator.locate(index);
  };

  it.each<[string, Donor[], MorselPlace]>([
    ['a stale copy is never offered', [live(A), live(B, { state: 'stale' })], donors(A)],
    ['a dead copy is never offered', [live(A, { state: 'dead' }), live(B)], donors(B)],
    ['no live copy: the source at once', [live(A, { state: 'dead' })], { kind: 'source' }],
  ])('%s', (_, mapDonors, want) => expect(locate(mapDonors)).toEqual(want));

  /** A locator over two live copies with a clock the test moves (ms). */
  const timed = () => {
    const clock = { now: 0 };
    const locator = new MorselLocator(
      { extents: twoCopies, donors: [live(A), live(B)] },
      undefined,
      { sourceBacked: true, now: () => clock.now },
    );
    return { clock, locator };
  };

  it('drops a donor after its second stall in a row, and not before', () => {
    const { clock, locator } = timed();
    expect(locator.stalled(A)).toBe(false);
    expect(locator.locate(2)).toEqual(donors(A, B));
    clock.now = STALL_EPISODE_MS;
    expect(locator.stalled(A)).toBe(true);
    expect(locator.isDropped(A)).toBe(true);
    expect(locator.locate(2)).toEqual(donors(B));
    clock.now += STALL_EPISODE_MS;
    expect(locator.stalled(A)).toBe(false); // reported dropped once
    expect(locator.droppedDonors()).toEqual([A]);
  });

  it('counts the stalls of one moment once: two morsels of one hiccup do not drop a donor', () => {
    const { clock, locator } = timed();
    expect(locator.stalled(A)).toBe(false);
    clock.now = STALL_EPISODE_MS - 1;
    expect(locator.stalled(A)).toBe(false);
    expect(locator.isDropped(A)).toBe(false);
  });

  it('starts the count again once the donor delivers a morsel', () => {
    const { clock, locator } = timed();
    locator.stalled(A);
    locator.delivered(A);
    clock.now = STALL_EPISODE_MS;
    expect(locator.stalled(A)).toBe(false);
    clock.now = 2 * STALL_EPISODE_MS;
    expect(locator.stalled(A)).toBe(true);
  });

  it('leaves a donor that lost a hedge out for DROP_FIRST_MS, telling once', () => {
    const { clock, locator } = timed();
    expect(locator.drop(A)).toBe(true);
    expect(locator.locate(2)).toEqual(donors(B));
    expect(locator.droppedNow()).toEqual([A]);
    clock.now = DROP_FIRST_MS;
    expect(locator.locate(2)).toEqual(donors(A, B));
    expect(locator.droppedNow()).toEqual([]);
    expect(locator.drop(A)).toBe(false); // out again, longer, not told again
    expect(locator.droppedDonors()).toEqual([A]);
  });

  it('ranks a failed donor behind its twin for FAILURE_MEMORY_MS, then as before', () => {
    const { clock, locator } = timed();
    const v0 = locator.healthVersion();
    locator.failed(A);
    expect(locator.locate(2)).toEqual(donors(B, A));
    expect(locator.healthVersion()).not.toBe(v0);
    const v1 = locator.healthVersion();
    clock.now = FAILURE_MEMORY_MS - 1;
    expect(locator.health(A)).toBe(1);
    expect(locator.healthVersion()).toBe(v1);
    clock.now = FAILURE_MEMORY_MS;
    expect(locator.healthVersion()).not.toBe(v1);
    expect(locator.health(A)).toBe(0);
    expect(locator.locate(2)).toEqual(donors(A, B));
  });

  it('keeps a dropped donor as the last resort when no source backs the read', () => {
    const locator = new MorselLocator({ extents: twoCopies, donors: [live(A), live(B)] });
    locator.drop(A);
    expect(locator.locate(2)).toEqual(donors(B, A));
  });
});

describe('MorselLocator over several copies', () => {
  /** Morsels 0…5 in two rotated copies: copy 0 A,B,A,…; copy 1 B,A,B,… */
  const rotated: Extent[] = [0, 1].map((copy) => ({
    copy,
    first: 0,
    count: 6,
    unit: 1,
    phase: copy,
    donors: [A, B],
  }));
  const all = [0, 1, 2, 3, 4, 5];
  const spreadOf = (mapDonors: Donor[], rate: (d: string) => number, failed: string[] = []) => {
    const locator = new MorselLocator({ extents: rotated, donors: mapDonors });
    for (const d of failed) locator.failed(d);
    return Object.fromEntries(locator.spread(all, rate));
  };

  it.each<[string, Donor[], Record<string, number>, string[], Record<string, number[]>]>([
    [
      'equal rates: half each',
      [live(A), live(B)],
      { a: 1, b: 1 },
      [],
      { a: [0, 2, 4], b: [1, 3, 5] },
    ],
    [
      'twice as fast: twice the morsels',
      [live(A), live(B)],
      { a: 2, b: 1 },
      [],
      { a: [0, 2, 3, 4], b: [1, 5] },
    ],
    [
      'a failed donor keeps none its healthy twin holds',
      [live(A), live(B)],
      { a: 1, b: 1 },
      [A],
      { b: all },
    ],
    [
      'a dead donor is last resort only',
      [live(A), live(B, { state: 'dead' })],
      { a: 1, b: 9 },
      [],
      { a: all },
    ],
  ])('%s', (_, mapDonors, rates, failed, want) => {
    expect(spreadOf(mapDonors, (d) => rates[d]!, failed)).toEqual(want);
  });

  it("asks the copy that would finish first when given each donor's wait", () => {
    const waits: Record<string, number> = { a: 3, b: 1 };
    const locator = new MorselLocator({ extents: rotated, donors: [live(A), live(B)] }, undefined, {
      wait: (d) => waits[d]!,
    });
    expect(locator.locate(0)).toEqual(donors(B, A));
    waits.a = 0.5;
    expect(locator.locate(0)).toEqual(donors(A, B));
    // Health still comes first: a failure outweighs any wait.
    locator.failed(A);
    expect(locator.locate(0)).toEqual(donors(B, A));
  });

  it.each<[string, Record<string, number>, string[]]>([
    // Morsel 0's copy 0 is on A. Within WAIT_SWITCH_FACTOR of each other, the map's order stands.
    ['equal waits', { a: 1, b: 1 }, [A, B]],
    ['the first copy a little later', { a: 1.9, b: 1 }, [A, B]],
    ['the first copy WAIT_SWITCH_FACTOR times later', { a: WAIT_SWITCH_FACTOR, b: 1 }, [B, A]],
    ['the second copy much later', { a: 1, b: 5 }, [A, B]],
  ])('keeps copy 0 first unless it would answer much later: %s', (_, waits, want) => {
    const locator = new MorselLocator({ extents: rotated, donors: [live(A), live(B)] }, undefined, {
      wait: (d) => waits[d]!,
    });
    expect(locator.locate(0)).toEqual(donors(...want));
  });
});

describe('MorselLocator.readOrder', () => {
  it.each<[string, PatchedSuffix | undefined, number[]]>([
    ['index order without a suffix', undefined, [0, 1, 2, 3, 4, 5, 6, 7]],
    ['the suffix in arrival order after the prefix', suffix(['P']), [0, 1, 2, 3, 7, 6, 5, 4]],
  ])('%s', (_, s, want) => {
    expect(new MorselLocator({ extents: twoCopies, donors: [] }, s).readOrder(8)).toEqual(want);
  });
});

describe('placeNodes', () => {
  it.each<[MorselPlace, string[]]>([
    [donors(A, B), [A, B]],
    [{ kind: 'patching', node: 'P' }, ['P']],
    [{ kind: 'source' }, []],
  ])('%j → %j', (place, want) => expect(placeNodes(place)).toEqual(want));
});

function donors(...copies: string[]): MorselPlace {
  return { kind: 'donors', copies };
}

describe('MorselLocator and copies known bad', () => {
  it.each([
    ['the map marks A’s copy of 2 bad', [{ morsel: 2, donor: A }], 2, [B]],
    ['other morsels of A stay readable', [{ morsel: 2, donor: A }], 1, [A, B]],
    [
      'both copies of 3 bad: the source',
      [
        { morsel: 3, donor: A },
        { morsel: 3, donor: B },
      ],
      3,
      [],
    ],
  ])('%s', (_label, badCopies, index, want) => {
    const locator = new MorselLocator(
      { extents: twoCopies, donors: [live(A), live(B)], badCopies },
      undefined,
      { sourceBacked: true },
    );
    expect(placeNodes(locator.locate(index))).toEqual(want);
  });

  it('a bad hash seen in this read takes that copy out for the rest of it, without a source too', () => {
    const locator = new MorselLocator({ extents: twoCopies, donors: [live(A), live(B)] });
    locator.badCopy(1, A);
    expect(placeNodes(locator.locate(1))).toEqual([B]);
    expect(placeNodes(locator.locate(0))).toEqual([A, B]);
  });
});
