import { describe, expect, it } from 'vitest';
import { BeatWheel } from './beat-wheel.js';

// The synthetic fleet's scheduler: what is due is handed out, in due order, nothing before its
// bucket; a pause holds everything and a resume puts it off by the pause, capped.

describe('BeatWheel', () => {
  it('hands out what is due at the next bucket, and keeps what is not', async () => {
    /** @type {[string, number][]} */
    const fired = [];
    const w = new BeatWheel((item, due) => fired.push([item, due]));
    const now = performance.now();
    w.add('later', now + 3_600_000);
    w.add('b', now - 100);
    w.add('a', now - 5_000);
    // Never into the bucket being handed out: due from the next one on (wait for it).
    while (fired.length < 2) {
      await new Promise((r) => setTimeout(r, 5));
      w.tick();
    }
    expect(fired.sort()).toEqual([
      ['a', now - 5_000],
      ['b', now - 100],
    ]);
    w.tick();
    expect(fired).toHaveLength(2);
    expect([...w.buckets.values()].flat().map((e) => e.item)).toEqual(['later']);
  });

  it('holds everything while paused; resumes each one as late as the pause, capped', () => {
    /** @type {string[]} */
    const fired = [];
    const w = new BeatWheel((item) => fired.push(item));
    const now = performance.now();
    w.pause();
    w.add('overdue', now - 1_000);
    w.add('far', now + 3_600_000);
    w.tick();
    expect(fired).toEqual([]);
    w.resume(10_000);
    const entries = [...w.buckets.values()].flat();
    const after = performance.now();
    // Overdue before the pause: as late as the pause was long (not a burst now).
    expect(entries.find((e) => e.item === 'overdue')?.due).toBeGreaterThanOrEqual(now - 1_000);
    // Far ahead: no later than the cap from the resume.
    expect(entries.find((e) => e.item === 'far')?.due).toBeLessThanOrEqual(after + 10_000);
  });
});
