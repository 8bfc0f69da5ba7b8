import { describe, expect, it } from 'vitest';
import { ForegroundYield } from './foreground-yield.js';

const MiB = 1024 * 1024;

/** A yield tracker on a clock the test moves by hand. */
function tracker(opts: { quietMs?: number; yieldRateBps?: number } = {}) {
  let now = 0;
  const fg = new ForegroundYield({ clock: () => now, ...opts });
  return { fg, advance: (ms: number) => (now += ms) };
}

describe('ForegroundYield', () => {
  it('lets background bytes pass while no client reads here', async () => {
    const { fg } = tracker();
    expect(fg.busy()).toBe(false);
    expect(fg.delayFor(64 * MiB)).toBe(0);
    await fg.background(64 * MiB); // returns without waiting on a clock that never moves
  });

  it('paces background bytes at the yield rate while clients read, then lets go', () => {
    const { fg, advance } = tracker({ quietMs: 500, yieldRateBps: MiB });
    fg.noteForeground();
    expect(fg.busy()).toBe(true);
    // The bucket starts with one small burst (64 KiB): 1 MiB then waits ≈ 15/16 s, the next 1 s more.
    const first = fg.delayFor(MiB);
    expect(first).toBeGreaterThan(900);
    expect(fg.delayFor(MiB) - first).toBeCloseTo(1000, 0);
    advance(499);
    expect(fg.busy()).toBe(true);
    advance(2);
    expect(fg.busy()).toBe(false);
    expect(fg.delayFor(MiB)).toBe(0);
  });

  it('caps one hold (a sender must answer before the reader calls it stalled)', () => {
    const { fg } = tracker({ yieldRateBps: MiB });
    fg.noteForeground();
    for (let i = 0; i < 10; i++) expect(fg.delayFor(MiB, 2_000)).toBeLessThanOrEqual(2_000);
  });

  it('starts each busy spell without the last one’s debt', () => {
    const { fg, advance } = tracker({ quietMs: 500, yieldRateBps: MiB });
    fg.noteForeground();
    for (let i = 0; i < 5; i++) fg.delayFor(MiB);
    advance(1_000);
    fg.noteForeground();
    expect(fg.delayFor(MiB)).toBeLessThan(1_000);
  });

  it('stops holding as soon as the foreground read is over', async () => {
    let now = 0;
    const fg = new ForegroundYield({ clock: () => now, quietMs: 500, yieldRateBps: 1024 });
    fg.noteForeground();
    const held = fg.background(MiB); // ≈ 1000 s at 1 KiB/s if the client kept reading
    now = 600; // the client stopped 600 ms ago: past the quiet time
    await held;
    expect(fg.busy()).toBe(false);
  });

  it('gives up when its signal aborts', async () => {
    const { fg } = tracker({ yieldRateBps: 1024 });
    fg.noteForeground();
    const ac = new AbortController();
    const held = fg.background(MiB, ac.signal);
    ac.abort(new Error('job cancelled'));
    await expect(held).rejects.toThrow(/cancelled|abort/i);
  });
});
