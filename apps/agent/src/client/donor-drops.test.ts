import { describe, expect, it } from 'vitest';
import { DonorDrops, DROP_FIRST_MS, DROP_MAX_MS } from './donor-drops.js';

describe('DonorDrops', () => {
  /** Drops of A at the given times (ms); what each drop returned and until when A stayed out. */
  function run(times: number[], deliveredAt: number[] = []) {
    let now = 0;
    const d = new DonorDrops(() => now);
    const told: boolean[] = [];
    const outFor: number[] = [];
    for (const t of times) {
      for (const at of deliveredAt.filter((x) => x <= t && x > now)) {
        now = at;
        d.delivered('A');
      }
      now = t;
      told.push(d.drop('A'));
      // Until when: the first moment isDropped turns false, searched in 100 ms steps.
      let end = t;
      while (end < t + 2 * DROP_MAX_MS) {
        now = end;
        if (!d.isDropped('A')) break;
        end += 100;
      }
      outFor.push(end - t);
      now = t;
    }
    return { told, outFor };
  }

  it.each<[string, number[], number[], boolean[], number[]]>([
    ['one drop: 3 s, told', [0], [], [true], [DROP_FIRST_MS]],
    ['a drop while out is ignored', [0, 1_000], [], [true, false], [DROP_FIRST_MS, 2_000]],
    [
      'drops in a row double, told once',
      [0, 3_000, 9_000, 21_000],
      [],
      [true, false, false, false],
      [3_000, 6_000, 12_000, 24_000],
    ],
    [
      'doubling stops at the maximum',
      [0, 3_000, 9_000, 21_000, 45_000, 93_000],
      [],
      [true, false, false, false, false, false],
      [3_000, 6_000, 12_000, 24_000, 48_000, DROP_MAX_MS],
    ],
    [
      'a delivery starts over',
      [0, 3_000, 20_000],
      [10_000],
      [true, false, false],
      [3_000, 6_000, 3_000],
    ],
  ])('%s', (_, times, delivered, told, outFor) => {
    expect(run(times, delivered)).toEqual({ told, outFor });
  });

  it('lists donors ever dropped in order, and moves its version when a drop starts or ends', () => {
    let now = 0;
    const d = new DonorDrops(() => now);
    const v0 = d.version();
    d.drop('B');
    d.drop('A');
    const v1 = d.version();
    expect(v1).not.toBe(v0);
    expect(d.everDropped()).toEqual(['B', 'A']);
    now = DROP_FIRST_MS - 1;
    expect(d.version()).toBe(v1);
    now = DROP_FIRST_MS;
    expect(d.version()).not.toBe(v1);
    expect(d.isDropped('A')).toBe(false);
    expect(d.everDropped()).toEqual(['B', 'A']);
  });

  it('a delivery while out does not end the drop', () => {
    let now = 0;
    const d = new DonorDrops(() => now);
    d.drop('A');
    now = 1_000;
    d.delivered('A'); // a late answer from before the drop
    expect(d.isDropped('A')).toBe(true);
  });
});

describe('DonorDrops.dropForRead', () => {
  it('leaves a donor out for the rest of the read, told once, whatever it delivers later', () => {
    let now = 0;
    const d = new DonorDrops(() => now);
    const v0 = d.version();
    expect(d.dropForRead('A')).toBe(true);
    expect(d.version()).not.toBe(v0);
    expect(d.dropForRead('A')).toBe(false);
    d.delivered('A'); // a late answer on an older connection
    now = 10 * DROP_MAX_MS;
    expect(d.isDropped('A')).toBe(true);
    expect(d.drop('A')).toBe(false);
    expect(d.isDropped('A')).toBe(true);
    expect(d.everDropped()).toEqual(['A']);
  });

  it('turns a timed drop into one for the read, and is news then', () => {
    let now = 0;
    const d = new DonorDrops(() => now);
    expect(d.drop('A')).toBe(true);
    expect(d.dropForRead('A')).toBe(true);
    now = 2 * DROP_MAX_MS;
    expect(d.isDropped('A')).toBe(true);
    expect(d.isDropped('B')).toBe(false);
  });
});
