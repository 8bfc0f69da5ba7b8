import { describe, expect, it } from 'vitest';
import { JobWaiters } from './job-waiters.js';

const A = 'a0000000-0000-4000-8000-000000000000';
const B = 'b0000000-0000-4000-8000-000000000000';

describe('JobWaiters', () => {
  it('wakes the waits of the agent a job is for, and only those', async () => {
    const w = new JobWaiters();
    const c = w.cursor;
    const a1 = w.wait(A, c, 60_000);
    const a2 = w.wait(A, c, 60_000);
    const b = w.wait(B, c, 50);
    expect(w.open).toBe(3);
    w.notify(A);
    expect((await a1).jobsPending).toBe(true);
    expect((await a2).jobsPending).toBe(true);
    expect((await b).jobsPending).toBe(false);
    expect(w.open).toBe(0);
  });

  it('answers at once a wait whose cursor predates a job announced between two waits', async () => {
    const w = new JobWaiters();
    const first = await w.wait(A, w.cursor, 10);
    expect(first.jobsPending).toBe(false);
    w.notify(A); // the agent is between waits
    const second = await w.wait(A, first.cursor, 60_000);
    expect(second.jobsPending).toBe(true);
    // Answered with a newer cursor: the same announcement does not wake the wait after it.
    expect((await w.wait(A, second.cursor, 10)).jobsPending).toBe(false);
    // A wake-up whose answer was lost: the agent comes back with its old cursor, woken again.
    expect((await w.wait(A, first.cursor, 60_000)).jobsPending).toBe(true);
  });

  it('does not count another agent’s job as new', async () => {
    const w = new JobWaiters();
    const c = w.cursor;
    w.notify(B);
    expect(w.since(A, c)).toBe('nothing');
    expect(w.since(B, c)).toBe('new');
    expect((await w.wait(A, c, 10)).jobsPending).toBe(false);
  });

  it('cannot judge a cursor of another manager, of an earlier run, or none', () => {
    const w = new JobWaiters();
    const other = new JobWaiters();
    expect(w.since(A, undefined)).toBe('unknown');
    expect(w.since(A, other.cursor)).toBe('unknown');
    expect(w.since(A, `${w.epoch}.99`)).toBe('unknown'); // a number it never handed out
    expect(w.since(A, 'garbage')).toBe('unknown');
    expect(w.since(A, w.cursor)).toBe('nothing');
  });

  it('forgets the oldest announcements past its bound, and says so for their cursors', () => {
    const w = new JobWaiters(4);
    const old = w.cursor;
    const agents = Array.from({ length: 6 }, (_, i) => `a000000${i}-0000-4000-8000-000000000000`);
    for (const id of agents) w.notify(id);
    // The first ones were forgotten: a cursor from before them is unknown (the route checks).
    expect(w.since(agents[5]!, old)).toBe('unknown');
    // A recent cursor is still judged, the newest announcements still remembered.
    const recent = `${w.epoch}.5`;
    expect(w.since(agents[5]!, recent)).toBe('new');
    expect(w.since(agents[0]!, recent)).toBe('nothing');
  });

  it('wakes every wait for a job any agent may claim', async () => {
    const w = new JobWaiters();
    const c = w.cursor;
    const waits = [w.wait(A, c, 60_000), w.wait(B, c, 60_000)];
    w.notify(null);
    expect((await Promise.all(waits)).map((x) => x.jobsPending)).toEqual([true, true]);
    expect(w.since(A, c)).toBe('new');
  });

  it('lets go of a wait whose client went away, and of all when closing', async () => {
    const w = new JobWaiters();
    const c = w.cursor;
    const gone = new AbortController();
    const a = w.wait(A, c, 60_000, gone.signal);
    const b = w.wait(B, c, 60_000);
    gone.abort();
    expect((await a).jobsPending).toBe(false);
    expect(w.isWaiting(A)).toBe(false);
    w.close();
    expect((await b).jobsPending).toBe(false);
    expect(await w.wait(A, c, 60_000)).toEqual({ jobsPending: false, cursor: c });
  });
});
