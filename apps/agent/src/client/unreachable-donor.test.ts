import { describe, expect, it } from 'vitest';
import { FreeLoaderError } from '@freeloader/protocol';
import { isUnreachable } from './unreachable-donor.js';

describe('isUnreachable', () => {
  const unavailable = (details?: Record<string, unknown>) =>
    new FreeLoaderError('UNAVAILABLE', 'donor 10.0.0.2:7070 unreachable', details);

  it.each<[string, unknown, boolean]>([
    [
      'connection refused (the agent was killed)',
      unavailable({ errno: 'ECONNREFUSED', bytesRead: 0 }),
      true,
    ],
    ['no route to the host', unavailable({ errno: 'EHOSTUNREACH', bytesRead: 0 }), true],
    ['network unreachable', unavailable({ errno: 'ENETUNREACH' }), true],
    ['reset before any byte', unavailable({ errno: 'ECONNRESET', bytesRead: 0 }), true],
    [
      'reset after bytes arrived (a closed keep-alive)',
      unavailable({ errno: 'ECONNRESET', bytesRead: 1_048_700 }),
      false,
    ],
    ['reset with no byte count', unavailable({ errno: 'ECONNRESET' }), false],
    ['closed by the donor (no errno)', unavailable(), false],
    ['a broken pipe', unavailable({ errno: 'EPIPE', bytesRead: 0 }), false],
    ['a stall', new FreeLoaderError('TIMEOUT', 'donor stalled', { errno: 'ECONNREFUSED' }), false],
    [
      'a bad hash',
      new FreeLoaderError('HASH_MISMATCH', 'morsel 3 failed its SHA-256 check'),
      false,
    ],
    ['a plain socket error', Object.assign(new Error('connect'), { code: 'ECONNREFUSED' }), false],
    ['nothing', undefined, false],
  ])('%s → %s', (_, error, want) => {
    expect(isUnreachable(error)).toBe(want);
  });
});
