import { describe, expect, it } from 'vitest';
import { BoundedTasks, forEachBounded } from './bounded-tasks.js';

const tick = () => new Promise((r) => setTimeout(r, 1));

describe('forEachBounded', () => {
  it('runs every item with at most `limit` at once, each lane one at a time', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    const busy = new Set<number>();
    await forEachBounded([1, 2, 3, 4, 5, 6, 7], 3, async (item, lane) => {
      expect(busy.has(lane)).toBe(false);
      busy.add(lane);
      most = Math.max(most, ++running);
      await tick();
      seen.push(item);
      running--;
      busy.delete(lane);
    });
    expect(most).toBe(3);
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
  });

  it('starts nothing after a failure and rejects only once the running tasks settled', async () => {
    const started: number[] = [];
    let settledAfterFailure = 0;
    const run = forEachBounded([0, 1, 2, 3, 4, 5], 2, async (item) => {
      started.push(item);
      if (item === 0) throw new Error('boom');
      await tick();
      settledAfterFailure++;
    });
    await expect(run).rejects.toThrow('boom');
    expect(started).toEqual([0, 1]);
    expect(settledAfterFailure).toBe(1);
  });
});

describe('BoundedTasks', () => {
  it('makes add wait for a free slot and drain wait for all', async () => {
    const tasks = new BoundedTasks(2);
    let running = 0;
    let most = 0;
    let done = 0;
    for (let i = 0; i < 6; i++) {
      await tasks.add(async () => {
        most = Math.max(most, ++running);
        await tick();
        running--;
        done++;
      });
    }
    await tasks.drain();
    expect([most, done]).toEqual([2, 6]);
  });

  it('throws the first failure from the next add and from drain', async () => {
    const tasks = new BoundedTasks(1);
    await tasks.add(() => Promise.reject(new Error('first')));
    await expect(tasks.add(() => Promise.resolve())).rejects.toThrow('first');
    await expect(tasks.drain()).rejects.toThrow('first');
    await tasks.settle();
  });
});
