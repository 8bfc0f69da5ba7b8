import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FreeLoaderEvent } from '@freeloader/protocol';
import { startHarness, type Harness } from './test/harness.js';

/** Silence after which the agent is stale here (ms). */
const STALE_AFTER_MS = 1_000;
/** How long it then stays stale before it is dead (ms): longer than a process stall under load. */
const STALE_WINDOW_MS = 5_000;
/** Upper bound of a wait (ms), not a target: every wait ends as soon as its condition holds. */
const WAIT_BOUND_MS = 60_000;

let h: Harness;
beforeAll(async () => {
  // Real timers and the real clock, with windows short enough to watch. The stale window
  // (dead minus stale) must outlast the longest stall of this process: a sweep must land in it
  // or the agent goes from live straight to dead. 400 ms (stale 300, dead 700) is less than a
  // busy 2-core machine (load 10+) can stall a process; 5 s is not.
  h = await startHarness(
    {
      staleAfterMs: STALE_AFTER_MS,
      deadAfterMs: STALE_AFTER_MS + STALE_WINDOW_MS,
      softStateFlushMs: 50,
    },
    { timers: true },
  );
});
afterAll(async () => {
  await h?.close();
});

async function waitFor<T>(
  probe: () => Promise<T | undefined> | T | undefined,
  ms = WAIT_BOUND_MS,
): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('soft-state timers', () => {
  it('flush last-seen to the database and announce stale then dead on their own', async () => {
    const seen: FreeLoaderEvent[] = [];
    const off = h.app.events.subscribe((e) => seen.push(e));
    const agent = await h.enroll();
    await h.call({
      method: 'POST',
      url: '/api/v1/agents/heartbeat',
      headers: { authorization: agent.auth },
      payload: { quotaBytes: 1, usedBytes: 0, freeBytes: 77, servingRate: 0 },
    });
    const flushed = await waitFor(async () => {
      const { rows } = await h.app.pg.query(
        'SELECT last_seen_at, free_bytes FROM agents WHERE id = $1',
        [agent.agentId],
      );
      return rows[0]?.free_bytes === 77 ? rows[0] : undefined;
    });
    expect(flushed.last_seen_at).toBeInstanceOf(Date);
    const states = () =>
      seen
        .filter((e) => e.type === 'agent' && e.agentId === agent.agentId)
        .map((e) => (e as { state: string }).state);
    await waitFor(() => (states().includes('dead') ? true : undefined));
    off();
    expect(states()).toEqual(['live', 'stale', 'dead']);
  });
});
