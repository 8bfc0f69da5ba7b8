import { describe, expect, it } from 'vitest';
import { parseNmcliMetered } from './metered.js';

describe('parseNmcliMetered', () => {
  it.each([
    ['connected and metered', 'GENERAL.STATE:100 (connected)\nGENERAL.METERED:yes\n', true],
    [
      'guessed metered counts: the OS says so',
      'GENERAL.STATE:100 (connected)\nGENERAL.METERED:yes (guessed)\n',
      true,
    ],
    [
      'connected, not metered',
      'GENERAL.STATE:100 (connected)\nGENERAL.METERED:no (guessed)\n',
      false,
    ],
    [
      'only a disconnected device is metered',
      'GENERAL.STATE:30 (disconnected)\nGENERAL.METERED:yes\nGENERAL.STATE:100 (connected)\nGENERAL.METERED:no\n',
      false,
    ],
    ['nothing connected', 'GENERAL.STATE:20 (unavailable)\nGENERAL.METERED:unknown\n', null],
  ])('%s', (_name, text, expected) => {
    expect(parseNmcliMetered(text)).toBe(expected);
  });
});
