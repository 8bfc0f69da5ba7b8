import { describe, expect, it } from 'vitest';
import { OwnerIdle, parseIoregIdle, parseXprintidle } from './owner-idle.js';

describe('platform idle parsers', () => {
  it.each([
    ['1234\n', 1234],
    ['', null],
    ['not a number', null],
  ])('xprintidle %j → %s', (out, ms) => {
    expect(parseXprintidle(out)).toBe(ms);
  });

  it.each([
    ['  |   "HIDIdleTime" = 2500000000\n', 2500],
    ['no such key', null],
  ])('ioreg %j → %s', (out, ms) => {
    expect(parseIoregIdle(out)).toBe(ms);
  });
});

describe('OwnerIdle', () => {
  it('a fresh report wins and ages with time; then the platform answers, asked at most every 500 ms', async () => {
    let now = 0;
    let asks = 0;
    const idle = new OwnerIdle(
      async () => (asks++, 7_000),
      () => now,
      30_000,
      500,
    );
    expect(await idle.read()).toBe(7_000);
    now = 200;
    expect(await idle.read()).toBe(7_200); // aged, not asked again
    expect(asks).toBe(1);
    idle.report(0);
    now = 1_200;
    expect(await idle.read()).toBe(1_000);
    now = 31_200; // the report went stale
    expect(await idle.read()).toBe(7_000);
    expect(asks).toBe(2);
  });

  it('unknown stays unknown', async () => {
    const idle = new OwnerIdle(
      async () => null,
      () => 0,
    );
    expect(await idle.read()).toBeNull();
  });
});
