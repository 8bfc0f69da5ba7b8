import { describe, expect, it } from 'vitest';
import { ProgressBalance } from './progress-balance.js';
import { stealFor, STEAL_SCAN } from './work-steal.js';

/** Round-robin twins as `import --width W` lays out n=2: morsel i on donors i % W and (i+1) % W. */
const twins =
  (w: number) =>
  (donor: string, i: number): boolean =>
    donor === `d${i % w}` || donor === `d${(i + 1) % w}`;

describe('stealFor', () => {
  it.each([
    {
      why: 'an idle thief takes the last morsel of the queue that would finish last',
      queues: { A: [0, 1, 2, 3], B: [], C: [4] },
      rates: {},
      inFlight: {},
      want: { victim: 'A', index: 3, at: 3 },
    },
    {
      why: 'a slow victim finishes later with fewer morsels queued',
      queues: { A: [0, 1, 2, 3], B: [], C: [4, 5, 6] },
      rates: { A: 4, B: 1, C: 1 },
      inFlight: {},
      want: { victim: 'C', index: 6, at: 2 },
    },
    {
      why: 'a victim about to reach its last morsel keeps it when the thief is busier',
      queues: { A: [7], B: [] },
      rates: {},
      inFlight: { B: 2 },
      want: undefined,
    },
    {
      why: 'the thief does not hold the victim last morsel: the last one it holds',
      queues: { A: [0, 1, 2, 3], B: [] },
      rates: {},
      inFlight: {},
      canServe: (_d: string, i: number) => i % 2 === 0,
      want: { victim: 'A', index: 2, at: 2 },
    },
    {
      why: 'nothing the thief holds is queued: the next victim',
      queues: { A: [1, 3, 5], B: [], C: [2, 4] },
      rates: {},
      inFlight: {},
      canServe: (_d: string, i: number) => i % 2 === 0,
      want: { victim: 'C', index: 4, at: 1 },
    },
    {
      why: 'every other queue empty',
      queues: { A: [], B: [] },
      rates: {},
      inFlight: {},
      want: undefined,
    },
  ])('$why', ({ queues, rates, inFlight, canServe, want }) => {
    const got = stealFor('B', {
      queues: new Map(Object.entries(queues)),
      canServe: canServe ?? (() => true),
      rate: (d) => (rates as Record<string, number>)[d],
      inFlight: (d) => (inFlight as Record<string, number>)[d] ?? 0,
    });
    expect(got).toEqual(want);
  });

  it('looks only STEAL_SCAN morsels back from the end of a queue', () => {
    const long = Array.from({ length: STEAL_SCAN + 10 }, (_, i) => i);
    const got = stealFor('B', {
      queues: new Map([
        ['A', long],
        ['B', []],
      ]),
      canServe: (_d, i) => i === 0,
      rate: () => undefined,
      inFlight: () => 0,
    });
    expect(got).toBeUndefined();
  });

  it("puts a twice-as-fast donor's spare capacity to work along the twins chain", () => {
    // 8 donors, 64 morsels each dealt round robin; d0 delivers twice as fast as the others. Each
    // step every donor delivers (d0 two morsels), stealing first when that helps.
    const w = 8;
    const queues = new Map<string, number[]>();
    for (let d = 0; d < w; d++) queues.set(`d${d}`, []);
    for (let i = 0; i < 64 * w; i++) queues.get(`d${i % w}`)!.push(i);
    const rate = (d: string): number => (d === 'd0' ? 2 : 1);
    const delivered = new Map<string, number>();
    let steps = 0;
    while ([...queues.values()].some((q) => q.length > 0)) {
      steps++;
      for (const [d, q] of queues) {
        for (let k = 0; k < rate(d); k++) {
          const got = stealFor(d, { queues, canServe: twins(w), rate, inFlight: () => 0 });
          if (got) {
            queues.get(got.victim)!.splice(got.at, 1);
            q.push(got.index);
          }
          if (q.shift() === undefined) break;
          delivered.set(d, (delivered.get(d) ?? 0) + 1);
        }
      }
    }
    // Without stealing d0 delivers its 64 and idles from step 32 on. Its twin d7 hands it
    // morsels, d6 hands d7 some, and so on: the spare capacity spreads one morsel of difference
    // per neighbour, so the read ends no later and d0 does more than half again its share.
    expect(steps).toBeLessThanOrEqual(64);
    expect(delivered.get('d0')).toBeGreaterThan(96);
    expect(delivered.get('d7')).toBeLessThan(64);
  });
});

describe('ProgressBalance.moved', () => {
  it('moves share from the victim to the thief, so a drained victim no longer holds others', () => {
    const b = new ProgressBalance(
      [
        ['a', 10],
        ['b', 10],
        ['c', 10],
      ],
      1,
    );
    const run = (key: string, n: number): void => {
      for (let k = 0; k < n; k++) {
        b.issued(key);
        b.completed(key);
      }
    };
    run('a', 5);
    run('b', 8);
    run('c', 9);
    expect(b.mayIssue('c')).toBe(false); // 90 % done against a's 50 %
    for (let k = 0; k < 5; k++) b.moved('a', 'c'); // c took a's last five
    expect(b.mayIssue('c')).toBe(true); // a is done; c (9 of 15) is behind b's 80 %
  });
});
