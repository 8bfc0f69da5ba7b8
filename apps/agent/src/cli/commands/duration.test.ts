import { describe, expect, it } from 'vitest';
import { parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['90s', 90],
    ['15m', 900],
    ['12h', 43200],
    ['7d', 604800],
    ['2w', 1209600],
  ])('%s → %i s', (text, s) => expect(parseDuration(text)).toBe(s));

  it.each(['', '7', 'd', '1.5h', '-1d', '3y'])('rejects %j', (t) =>
    expect(() => parseDuration(t)).toThrow(/duration/),
  );
});
