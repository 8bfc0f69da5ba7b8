import { describe, expect, it } from 'vitest';
import { isDatabaseUnavailable } from './unavailable.js';

const err = (fields: Record<string, unknown>, message = 'x'): Error =>
  Object.assign(new Error(message), fields);

describe('isDatabaseUnavailable', () => {
  it.each([
    ['connection refused', err({ code: 'ECONNREFUSED' }), true],
    ['connection reset', err({ code: 'ECONNRESET' }), true],
    ['admin shutdown (pg_ctl stop)', err({ code: '57P01' }), true],
    ['crash shutdown', err({ code: '57P02' }), true],
    ['starting up / recovering', err({ code: '57P03' }), true],
    ['connection exception class 08', err({ code: '08006' }), true],
    ['pool: connection terminated', err({}, 'Connection terminated unexpectedly'), true],
    [
      'refused on every address',
      Object.assign(new AggregateError([err({ code: 'ECONNREFUSED' })]), {}),
      true,
    ],
    ['wrapped in a cause', new Error('outer', { cause: err({ code: 'ECONNREFUSED' }) }), true],
    ['unique violation', err({ code: '23505' }), false],
    ['syntax error', err({ code: '42601' }), false],
    ['a plain bug', new TypeError('cannot read properties of undefined'), false],
    ['not an error', 'ECONNREFUSED', false],
    ['nothing', undefined, false],
  ])('%s → %s', (_name, e, expected) => {
    expect(isDatabaseUnavailable(e)).toBe(expected);
  });
});
