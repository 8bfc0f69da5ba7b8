import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../test/harness.js';

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
