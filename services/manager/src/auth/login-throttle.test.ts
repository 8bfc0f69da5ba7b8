import { describe, expect, it } from 'vitest';
import { LoginThrottle } from './login-throttle.js';

describe('LoginThrottle', () => {
  const limits = { perAddress: 3, perUser: 5, windowMs: 60_000 };

  it.each<{
    name: string;
    failures: Array<[string, string]>;
    check: [string, string];
    wait: number;
  }>([
    {
      name: 'below the address limit',
      failures: [
        ['ada', 'A'],
        ['ada', 'A'],
      ],
      check: ['ada', 'A'],
      wait: 0,
    },
    {
      name: 'address used up',
      failures: [
        ['ada', 'A'],
        ['bob', 'A'],
        ['eve', 'A'],
      ],
      check: ['zed', 'A'],
      wait: 60,
    },
    {
      name: 'another address, same user',
      failures: [
        ['ada', 'A'],
        ['ada', 'A'],
        ['ada', 'A'],
      ],
      check: ['ada', 'B'],
      wait: 0,
    },
    {
      name: 'user used up from many addresses',
      failures: [
        ['ada', 'A'],
        ['ada', 'B'],
        ['ada', 'C'],
        ['ada', 'D'],
        ['Ada', 'E'],
      ],
      check: ['ada', 'F'],
      wait: 60,
    },
  ])('$name', ({ failures, check, wait }) => {
    const t = new LoginThrottle(limits, () => 1000);
    for (const [u, a] of failures) t.failed(u, a);
    if (wait === 0) {
      expect(() => t.check(...check)).not.toThrow();
    } else {
      expect(() => t.check(...check)).toThrow(
        expect.objectContaining({ code: 'RATE_LIMITED', details: { retryAfterS: wait } }),
      );
    }
  });

  it('forgets a window once it ends', () => {
    let now = 0;
    const t = new LoginThrottle(limits, () => now);
    for (let i = 0; i < 3; i++) t.failed('ada', 'A');
    now = 30_000;
    expect(() => t.check('ada', 'A')).toThrow(
      expect.objectContaining({ details: { retryAfterS: 30 } }),
    );
    now = 60_000;
    expect(() => t.check('ada', 'A')).not.toThrow();
  });
});
