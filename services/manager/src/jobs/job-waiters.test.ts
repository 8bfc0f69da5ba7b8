import { describe, expect, it } from 'vitest';
import { JobWaiters } from './job-waiters.js';

const A = 'a0000000-0000-4000-8000-000000000000';
const B = 'b0000000-0000-4000-8000-000000000000';

describe('JobWaiters', () => {
  it('wakes the waits of the agent a job is for, and only those', async () => {
    const w = new JobWaiters();
    const a1 = w.wait(A, 60_000);
    const a2 = w.wait(A, 60_000);
    const b = w.wait(B, 50);
    expect(w.open).toBe(3);
    w.notify(A);
    expect(await a1).toBe(true);
    expect(await a2).toBe(true);
    expect(await b).toBe(false);
    expect(w.open).toBe(0);
  });

  it('remembers a wake-up for an agent between two waits, until it expires', async () => {
    let now = 0;
    const w = new JobWaiters(1_000, () => now);
    w.notify(A);
    expect(await w.wait(A, 60_000)).toBe(true);
    // Spent: the next wait is held again.
    expect(await w.wait(A, 10)).toBe(false);
    w.notify(A);
    now = 1_000;
    expect(await w.wait(A, 10)).toBe(false);
  });

  it('wakes every wait for a job any agent may claim', async () => {
    const w = new JobWaiters();
    const waits = [w.wait(A, 60_000), w.wait(B, 60_000)];
    w.notify(null);
    expect(await Promise.all(waits)).toEqual([true, true]);
  });

  it('lets go of a wait whose client went away, and of all when closing', async () => {
    const w = new JobWaiters();
    const gone = new AbortController();
    const a = w.wait(A, 60_000, gone.signal);
    const b = w.wait(B, 60_000);
    gone.abort();
    expect(await a).toBe(false);
    expect(w.isWaiting(A)).toBe(false);
    w.close();
    expect(await b).toBe(false);
    expect(await w.wait(A, 60_000)).toBe(false);
  });
});
