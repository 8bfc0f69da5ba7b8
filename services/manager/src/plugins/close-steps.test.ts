import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startHarness, type Harness } from '../test/harness.js';
import { CloseSteps } from './close-steps.js';

// A manager with 10,000 agents on a busy machine took more than 70 s to stop: a periodic task's
// tick waited behind the pool's backlog, and the stop waited for the tick. The stop now goes on
// without a tick or a running query that does not finish, and says which steps it cut.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  // FORCE ends the connections the stop left running.
  await h?.db.drop();
});

/** Wait until `ok()` holds (no clock involved: the machine may be slow). */
async function until(ok: () => boolean): Promise<void> {
  while (!ok()) await new Promise((r) => setTimeout(r, 20));
}

describe('a manager stopping while work does not finish', () => {
  it('stops without a hung periodic tick, running queries or queued ones, and names the cut steps', async () => {
    const { app } = h;
    let began = false;
    const task = app.singletons.start(
      'history',
      () => {
        began = true;
        return new Promise(() => undefined); // a tick that never ends
      },
      3_600_000,
      { runAtStart: false },
    );
    task.poke();
    await until(() => began);
    // Every pool connection running a long query, and one more query waiting for a connection.
    const max = app.pg.options.max ?? 10;
    for (let i = 0; i < max; i++) void app.pg.query('SELECT pg_sleep(600)').catch(() => undefined);
    await until(() => app.pg.totalCount === max && app.pg.idleCount === 0);
    let queuedRan = false;
    void app.pg.query('SELECT 1').then(
      () => (queuedRan = true),
      () => undefined,
    );
    await until(() => app.pg.waitingCount === 1);

    await app.close();

    const { steps } = app.closeSteps.summary();
    expect(steps.find((s) => s.step === 'periodic task history stopped')).toMatchObject({
      late: true,
    });
    expect(steps.find((s) => s.step.startsWith('pg pool ended'))).toMatchObject({
      step: `pg pool ended (${max} running, 1 queued)`,
      late: true,
    });
    expect(queuedRan).toBe(false);
  });
});

describe('CloseSteps', () => {
  it('marks late only the bounded step that was cut, not one ending around it', async () => {
    const steps = new CloseSteps();
    let finish: () => void = () => undefined;
    const quick = new Promise<void>((r) => (finish = r));
    // The hung step's bound expires while the quick one still runs; the quick one ends after.
    const hung = steps.bounded('hung', () => new Promise(() => undefined), 1);
    const done = steps.bounded('quick', () => quick, 60_000);
    await until(() => steps.pending().quick !== undefined && steps.pending().hung === undefined);
    finish();
    expect(await Promise.all([hung, done])).toEqual(['late', 'done']);
    expect(steps.summary().steps.map((s) => [s.step, s.late ?? false])).toEqual([
      ['hung', true],
      ['quick', false],
    ]);
  });

  it('records a step that fails, rethrows, and leaves no bound timer behind', async () => {
    vi.useFakeTimers();
    try {
      const steps = new CloseSteps();
      await expect(
        steps.bounded('fails', () => Promise.reject(new Error('no')), 60_000),
      ).rejects.toThrow('no');
      expect(steps.summary().steps).toMatchObject([{ step: 'fails' }]);
      expect(steps.summary().steps[0]!.late).toBeUndefined();
      // A pending bound would keep a stopping manager's event loop alive for maxMs.
      expect(vi.getTimerCount()).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });
});
