import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { DIRECT_WRITE_WINDOW_BYTES, DirectWritePace } from './direct-write-pace.js';

/** Feed `writes` of [start ms, end ms, bytes] in order of their ends; every verdict given. */
function verdicts(writes: [number, number, number][]): string[] {
  const pace = new DirectWritePace(0);
  const events = writes
    .flatMap(([s, e, b]) => [
      { at: s, start: true, bytes: 0 },
      { at: e, start: false, bytes: b },
    ])
    .sort((x, y) => x.at - y.at || Number(y.start) - Number(x.start));
  const out: string[] = [];
  for (const ev of events) {
    if (ev.start) pace.started(ev.at);
    else {
      const v = pace.finished(ev.at, ev.bytes);
      if (v) out.push(v);
    }
  }
  return out;
}

/** `n` writes of `mib` MiB, each `ms` long, one after another from `gap` ms apart. */
function serial(n: number, mib: number, ms: number, gap = 0): [number, number, number][] {
  return Array.from({ length: n }, (_, i) => {
    const s = i * (ms + gap);
    return [s, s + ms, mib * MiB] as [number, number, number];
  });
}

describe('DirectWritePace', () => {
  it.each<[string, [number, number, number][], string[]]>([
    ['an SSD: 1 MiB in 0.6 ms, idle between writes', serial(64, 1, 0.6, 8), []],
    [
      'a spinning disk seeking: 1 MiB in 16 ms back to back, three windows',
      serial(96, 1, 16),
      ['the disk took direct writes at 66 MB/s'],
    ],
    ['a stall of two windows is not a slow disk', serial(64, 1, 16), []],
    [
      'a stall, a fast window, a stall: no three in a row',
      [
        ...serial(64, 1, 16),
        ...serial(32, 1, 0.6).map(([s, e, b]): [number, number, number] => [s + 2000, e + 2000, b]),
        ...serial(64, 1, 16).map(([s, e, b]): [number, number, number] => [s + 3000, e + 3000, b]),
      ],
      [],
    ],
    [
      'slow writes, but the disk idle most of the time (a starved thread)',
      serial(32, 1, 16, 20),
      [],
    ],
    [
      'four at once, 1 MiB each in 12 ms: 350 MB/s in all',
      Array.from({ length: 32 }, (_, i) => {
        const s = Math.floor(i / 4) * 12;
        return [s, s + 12, MiB] as [number, number, number];
      }),
      [],
    ],
    ['fewer bytes than one window: no verdict', serial(31, 1, 100), []],
    [
      'slow windows past the third go on saying so',
      serial(128, 1, 16),
      ['the disk took direct writes at 66 MB/s', 'the disk took direct writes at 66 MB/s'],
    ],
  ])('%s', (_, writes, want) => {
    expect(verdicts(writes)).toEqual(want);
  });

  it('counts a failed write as no bytes', () => {
    const pace = new DirectWritePace(0);
    for (let i = 0; i < 40; i++) {
      pace.started(i * 16);
      expect(pace.finished(i * 16 + 16, 0)).toBeUndefined();
    }
    expect(DIRECT_WRITE_WINDOW_BYTES).toBe(32 * MiB);
  });
});
