import { describe, expect, it } from 'vitest';
import { hedge, hedgeDelayMs } from './hedge.js';

const after = <T>(ms: number, value: T) =>
  new Promise<T>((resolve) => setTimeout(() => resolve(value), ms));
const failAfter = (ms: number, message: string) =>
  new Promise<never>((_, reject) => setTimeout(() => reject(new Error(message)), ms));

describe('hedgeDelayMs', () => {
  it.each<[number | undefined, number, number]>([
    [undefined, 0, 2_000],
    [30, 0, 400],
    [30, 2, 400],
    [200, 0, 600],
    [200, 1, 1_200],
  ])('p90 %s ms, %i ahead → %i ms', (p90, ahead, ms) => expect(hedgeDelayMs(p90, ahead)).toBe(ms));
});

describe('hedge', () => {
  it('never asks the backup when the primary answers in time', async () => {
    let asked = false;
    const got = await hedge(
      () => after(5, 'a'),
      () => ((asked = true), after(1, 'b')),
      200,
      () => undefined,
    );
    expect(got).toEqual({ value: 'a', by: 'primary' });
    expect(asked).toBe(false);
  });

  it('asks the backup of a slow primary; the first answer wins and the primary is cancelled', async () => {
    let cancelled = false;
    const got = await hedge(
      () => after(5_000, 'a'),
      () => after(5, 'b'),
      20,
      () => (cancelled = true),
    );
    expect(got).toEqual({ value: 'b', by: 'backup' });
    expect(cancelled).toBe(true);
  });

  it('keeps the primary when it still answers first after the backup started', async () => {
    let cancelled = false;
    const got = await hedge(
      () => after(40, 'a'),
      () => after(5_000, 'b'),
      10,
      () => (cancelled = true),
    );
    expect(got).toEqual({ value: 'a', by: 'primary' });
    expect(cancelled).toBe(false);
  });

  it('falls back on the other request when one fails', async () => {
    expect(
      await hedge(
        () => failAfter(30, 'primary down'),
        () => after(60, 'b'),
        10,
        () => undefined,
      ),
    ).toEqual({ value: 'b', by: 'backup' });
    expect(
      await hedge(
        () => after(60, 'a'),
        () => failAfter(1, 'backup down'),
        10,
        () => undefined,
      ),
    ).toEqual({ value: 'a', by: 'primary' });
  });

  it("throws the primary's error when both fail, or at once without a backup", async () => {
    await expect(
      hedge(
        () => failAfter(30, 'primary down'),
        () => failAfter(1, 'b'),
        10,
        () => undefined,
      ),
    ).rejects.toThrow('primary down');
    await expect(
      hedge(
        () => failAfter(1, 'alone'),
        undefined,
        10,
        () => undefined,
      ),
    ).rejects.toThrow('alone');
  });
});
