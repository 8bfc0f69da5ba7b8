import { describe, expect, it } from 'vitest';
import {
  ERROR_STATUS,
  FreeLoaderError,
  codeOfStatus,
  isErrorCode,
  statusOf,
  type ErrorCode,
} from './errors.js';

describe('error table', () => {
  it.each(Object.entries(ERROR_STATUS) as [ErrorCode, number][])('%s ↔ %i', (code, status) => {
    expect(statusOf(code)).toBe(status);
    // the default code of a status maps back to the same status
    expect(statusOf(codeOfStatus(status))).toBe(status);
  });

  it.each([
    [418, 'BAD_REQUEST'],
    [599, 'INTERNAL'],
    [507, 'NO_SPACE'],
  ] as const)('unknown-or-listed status %i → %s', (status, code) => {
    expect(codeOfStatus(status)).toBe(code);
  });

  it('round-trips through a response body', () => {
    const e = new FreeLoaderError('NO_SPACE', 'cache is full', { needed: 10 });
    const back = FreeLoaderError.fromResponse(e.status, JSON.parse(JSON.stringify(e.toBody())));
    expect(back).toMatchObject({
      code: 'NO_SPACE',
      status: 507,
      message: 'cache is full',
      details: { needed: 10 },
    });
  });

  it.each([
    [404, 'not json', 'NOT_FOUND', 'HTTP 404: not json'],
    [507, '{"error":{"code":"NO_SPACE","message":"full"}}', 'NO_SPACE', 'full'],
    [502, { error: { code: 'NOPE', message: 'x' } }, 'SOURCE_ERROR', 'HTTP 502'],
    [500, null, 'INTERNAL', 'HTTP 500'],
  ])('foreign body %#: status %i → code %s', (status, body, code, message) => {
    const e = FreeLoaderError.fromResponse(status, body);
    expect(e.code).toBe(code);
    expect(e.message).toBe(message);
  });

  it('recognises codes', () => {
    expect(isErrorCode('NO_SPACE')).toBe(true);
    expect(isErrorCode('toString')).toBe(false);
    expect(isErrorCode(42)).toBe(false);
  });
});
