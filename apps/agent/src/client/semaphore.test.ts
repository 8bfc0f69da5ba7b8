import { describe, expect, it } from 'vitest';
import { Semaphore } from './semaphore.js';

describe('Semaphore', () => {
  it('admits at most `limit` holders and serves waiters in order', async () => {
    const s = new Semaphore(2);
    const order: number[] = [];
    await s.acquire();
    await s.acquire();
    const waiting = [1, 2].map((n) => s.acquire().then(() => order.push(n)));
    expect(s.inUse).toBe(2);
    s.release();
    await waiting[0];
    expect(order).toEqual([1]);
    s.release();
    await waiting[1];
    expect(order).toEqual([1, 2]);
    s.release();
    s.release();
    expect(s.inUse).toBe(0);
  });

  it.each([0, -1, NaN])('rejects limit %d', (n) =>
    expect(() => new Semaphore(n)).toThrow(RangeError),
  );
});
