import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Queryable } from '../db/pool.js';
import { startHarness, type Harness } from '../test/harness.js';
import { ManagerSourcePolicy } from './source-policy.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

describe('the manager source policy', () => {
  it('reads the setting once for heartbeats that arrive together when it expired', async () => {
    let reads = 0;
    const counting: Queryable = {
      query: ((...args: Parameters<Queryable['query']>) => {
        reads++;
        return (h.app.pg.query as (...a: unknown[]) => unknown)(...args);
      }) as Queryable['query'],
    };
    const policy = new ManagerSourcePolicy(counting, { sourceAllow: ['10.0.0.0/8'] });
    const answers = await Promise.all(Array.from({ length: 20 }, () => policy.current()));
    expect(reads).toBe(1);
    expect(answers.every((p) => p === policy.policy)).toBe(true);
  });

  it('answers from memory while an expired setting is read again', async () => {
    let reads = 0;
    let release: () => void = () => undefined;
    let held: Promise<void> = Promise.resolve();
    const gated: Queryable = {
      query: ((...args: Parameters<Queryable['query']>) => {
        reads++;
        return held.then(() => (h.app.pg.query as (...a: unknown[]) => unknown)(...args));
      }) as unknown as Queryable['query'],
    };
    // A TTL of 0: every call after the first finds the setting expired.
    const policy = new ManagerSourcePolicy(gated, { sourceAllow: [] }, 0);
    await policy.current();
    held = new Promise((r) => (release = r));
    // The database read is held; heartbeats do not wait for it.
    const answers = await Promise.all(Array.from({ length: 5 }, () => policy.current()));
    expect(answers.every((p) => p === policy.policy)).toBe(true);
    expect(reads).toBe(2);
    release();
  });
});
