import { describe, expect, it } from 'vitest';
import { ProgressBalance } from './progress-balance.js';

/** A balance (lead 2) whose queues have issued `issued[i]` and completed `done[i]` of `totals[i]`. */
function balanceAt(totals: number[], issued: number[], done: number[]): ProgressBalance {
  const b = new ProgressBalance(
    totals.map((t, i) => [`q${i}`, t]),
    2,
  );
  totals.forEach((_, i) => {
    for (let k = 0; k < issued[i]!; k++) b.issued(`q${i}`);
    for (let k = 0; k < done[i]!; k++) b.completed(`q${i}`);
  });
  return b;
}

describe('ProgressBalance', () => {
  it.each([
    // totals, issued, completed, queue asking, may it issue?
    { totals: [100, 100], issued: [0, 0], done: [0, 0], key: 'q0', may: true },
    { totals: [100, 100], issued: [2, 2], done: [0, 0], key: 'q0', may: true }, // 3 % ≤ 2 items + 1 %
    { totals: [100, 100], issued: [3, 2], done: [1, 0], key: 'q0', may: false }, // 4 % vs 0 % done
    { totals: [100, 100], issued: [3, 2], done: [1, 1], key: 'q0', may: true }, // q1 completed one
    { totals: [100, 100], issued: [5, 2], done: [5, 0], key: 'q1', may: true }, // the least is never held
    { totals: [100, 10], issued: [20, 2], done: [18, 1], key: 'q0', may: false }, // 21 % vs 10 %
    { totals: [100, 10], issued: [12, 2], done: [10, 1], key: 'q0', may: true }, // 13 % vs 10 %
    { totals: [100, 10], issued: [50, 10], done: [48, 9], key: 'q0', may: true }, // 51 % vs 90 %
    { totals: [100, 10], issued: [90, 10], done: [88, 10], key: 'q0', may: true }, // q1 is done
    { totals: [100, 0], issued: [50, 0], done: [50, 0], key: 'q0', may: true }, // empty queues never hold
  ])(
    '$totals issued $issued done $done: $key may issue = $may',
    ({ totals, issued, done, key, may }) => {
      expect(balanceAt(totals, issued, done).mayIssue(key)).toBe(may);
    },
  );

  it('keeps a fast queue within its lead of a slow one, and both finish', async () => {
    const b = new ProgressBalance(
      [
        ['fast', 200],
        ['slow', 200],
      ],
      2,
    );
    const issued = { fast: 0, slow: 0 };
    const done = { fast: 0, slow: 0 };
    let maxLead = 0;
    // Two requests in flight per queue (two workers each); the fast queue completes an item
    // every tick, the slow one every third tick.
    const worker = async (key: 'fast' | 'slow', ticks: number): Promise<void> => {
      while (issued[key] < 200) {
        await b.turn(key);
        if (issued[key] >= 200) return;
        issued[key]++;
        b.issued(key);
        for (let t = 0; t < ticks; t++) await new Promise((r) => setImmediate(r));
        done[key]++;
        b.completed(key);
        maxLead = Math.max(maxLead, done.fast - done.slow);
      }
    };
    await Promise.all([worker('fast', 1), worker('fast', 1), worker('slow', 3), worker('slow', 3)]);
    expect(done).toEqual({ fast: 200, slow: 200 });
    // Two in flight plus 1 % of 200: the fast queue completes at most 4 items ahead.
    expect(maxLead).toBeLessThanOrEqual(4);
    expect(maxLead).toBeGreaterThan(0);
  });

  it('releases a held queue when the read is aborted', async () => {
    const controller = new AbortController();
    const b = new ProgressBalance(
      [
        ['q0', 100],
        ['q1', 100],
      ],
      2,
      controller.signal,
    );
    for (let k = 0; k < 10; k++) b.issued('q0');
    const held = b.turn('q0');
    let released = false;
    void held.then(() => (released = true));
    await new Promise((r) => setImmediate(r));
    expect(released).toBe(false);
    controller.abort();
    await held;
    expect(released).toBe(true);
  });

  it('re-deals shares: work moved off a failed queue holds the others to their new shares', () => {
    const b = new ProgressBalance(
      [
        ['dead', 100],
        ['twin', 100],
      ],
      2,
    );
    // Both issued and completed 10; the dead queue's 90 left go to its twin, which now has 190.
    for (let k = 0; k < 10; k++) {
      for (const q of ['dead', 'twin']) {
        b.issued(q);
        b.completed(q);
      }
    }
    b.rebalance([
      ['dead', 0],
      ['twin', 180],
      ['other', 10],
    ]);
    // The dead queue is finished (10 of 10): it no longer holds anyone back; "other" is new and
    // least advanced (0 of 10), so the twin may run only its lead plus 1 % of 190 ahead of 0.
    expect(b.mayIssue('other')).toBe(true);
    expect(b.mayIssue('twin')).toBe(false);
    b.issued('other');
    b.completed('other');
    // other at 1/10: the twin may be 10 % of 190 = 19 ahead, plus its lead: it issued 10.
    expect(b.mayIssue('twin')).toBe(true);
  });
});
