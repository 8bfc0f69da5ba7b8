import { describe, expect, it } from 'vitest';
import { ReceiveSlot } from './receive-slot.js';

describe('ReceiveSlot', () => {
  it('gives turns one at a time, in the order asked, and passes the lane buffers on', async () => {
    const slot = new ReceiveSlot();
    const order: string[] = [];
    const first = await slot.acquire();
    const buffers = first.buffers(1024).of(0);
    const second = slot.acquire().then((t) => (order.push('second'), t));
    const third = slot.acquire().then((t) => (order.push('third'), t));
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual([]);
    expect(slot.waiting).toBe(3);
    first.release();
    first.release(); // idempotent: does not release the second's turn
    const t2 = await second;
    await new Promise((r) => setTimeout(r, 20));
    expect(order).toEqual(['second']);
    expect(t2.buffers(1024).of(0)).toBe(buffers);
    t2.release();
    const t3 = await third;
    expect(t3.buffers(2048).of(0)).not.toBe(buffers); // another morsel size: new buffers
    t3.release();
    expect(slot.waiting).toBe(0);
  });

  it('lets a job give up while waiting without letting the next one overtake the running one', async () => {
    const slot = new ReceiveSlot();
    const running = await slot.acquire();
    const ac = new AbortController();
    const quitter = slot.acquire(ac.signal);
    let nextStarted = false;
    const next = slot.acquire().then((t) => ((nextStarted = true), t));
    ac.abort(new Error('cancelled'));
    await expect(quitter).rejects.toThrow('cancelled');
    await new Promise((r) => setTimeout(r, 20));
    expect(nextStarted).toBe(false);
    running.release();
    (await next).release();
    expect(nextStarted).toBe(true);
  });
});
