import { createServer } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePortBlock, portFree } from './free-ports.js';

describe('free ports', () => {
  /** A real listener holding `busy`, as a lingering process from a crashed run would. */
  const holder = createServer();
  let busy = 0;
  beforeAll(async () => {
    await new Promise((resolve) => holder.listen(0, '127.0.0.1', () => resolve(undefined)));
    const addr = holder.address();
    busy = typeof addr === 'object' && addr ? addr.port : 0;
  });
  afterAll(() => new Promise((resolve) => holder.close(() => resolve(undefined))));

  it('sees the held port as taken', async () => {
    expect(await portFree(busy)).toBe(false);
  });

  it.each([
    ['the busy port alone', (/** @type {number} */ p) => [p]],
    ['a block with the busy port second', (/** @type {number} */ p) => [p - 3, p]],
  ])('shifts %s by whole steps past it', async (_, block) => {
    const ports = block(busy);
    const got = await freePortBlock(ports, { step: 7, tries: 10 });
    expect(got).not.toContain(busy);
    const shift = /** @type {number} */ (got[0]) - /** @type {number} */ (ports[0]);
    expect(shift % 7).toBe(0);
    expect(shift).toBeGreaterThan(0);
    expect(got).toEqual(ports.map((p) => p + shift));
    for (const p of got) expect(await portFree(p)).toBe(true);
  });

  it('keeps a free block where it is', async () => {
    const [free] = await freePortBlock([busy], { step: 7, tries: 10 });
    expect(await freePortBlock([/** @type {number} */ (free)])).toEqual([free]);
  });

  it('names the busy ports when every try fails', async () => {
    await expect(freePortBlock([busy], { tries: 1 })).rejects.toThrow(String(busy));
  });
});
