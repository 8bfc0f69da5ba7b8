import { describe, expect, it } from 'vitest';
import { ProgressBalance } from './progress-balance.js';

/** A balance whose queues have already issued `issued[i]` of `totals[i]` items. */
function balanceAt(totals: number[], issued: number[]): ProgressBalance {
  const b = new ProgressBalance(totals.map((t, i) => [`q${i}`, t]));
  issued.forEach((n, i) => {
    for (let k = 0; k < n; k++) b.issued(`q${i}`);
  });
  return b;
}

describe('ProgressBalance', () => {
  it.each([
    // totals, issued, queue asking, may it issue?
    { totals: [100, 100], issued: [0, 0], key: 'q0', may: true },
    { totals: [100, 100], issued: [1, 0], key: 'q0', may: true }, // 2nd item: 2 % ≤ 1 item + 1 %
    { totals: [100, 100], issued: [2, 0], key: 'q0', may: false }, // 3rd item: 3 % ahead of 0 %
    { totals: [100, 100], issued: [2, 0], key: 'q1', may: true }, // the least is never held
    { totals: [100, 10], issued: [20, 1], key: 'q0', may: false }, // 21 % vs 10 %
    { totals: [100, 10], issued: [11, 1], key: 'q0', may: true }, // 12 % vs 10 %
    { totals: [100, 10], issued: [90, 10], key: 'q0', may: true }, // q1 has nothing left
    { totals: [100, 0], issued: [50, 0], key: 'q0', may: true }, // empty queues never hold
  ])('$totals issued $issued: $key may issue = $may', ({ totals, issued, key, may }) => {
    expect(balanceAt(totals, issued).mayIssue(key)).toBe(may);
  });

  it('keeps a fast queue within its lead of a slow one, and both finish', async () => {
    const b = new ProgressBalance([
      ['fast', 200],
      ['slow', 200],
    ]);
    const issued = { fast: 0, slow: 0 };
    let maxLead = 0;
    // The fast queue completes an item every tick, the slow one every third tick.
    const run = async (key: 'fast' | 'slow', ticks: number): Promise<void> => {
      while (issued[key] < 200) {
        await b.turn(key);
        issued[key]++;
        b.issued(key);
        maxLead = Math.max(maxLead, issued.fast - issued.slow);
        for (let t = 0; t < ticks; t++) await new Promise((r) => setImmediate(r));
      }
    };
    await Promise.all([run('fast', 1), run('slow', 3)]);
    expect(issued).toEqual({ fast: 200, slow: 200 });
    // 1 item + 1 % of 200 = 3 items, plus the one being counted.
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
});
