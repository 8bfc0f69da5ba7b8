import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { unwrapDataKey, wrapDataKey, WRAPPED_KEY_BYTES } from './data-key-wrap.js';

const A = '0f8fad5b-d9cb-469f-a165-70867728950e';
const B = '1f8fad5b-d9cb-469f-a165-70867728950e';

describe('wrapped dataset keys', () => {
  const master = randomBytes(32);
  const key = randomBytes(32);

  it('unwrap gives the key back; two wraps of one key differ (random nonce)', () => {
    const wrapped = wrapDataKey(master, A, key);
    expect(wrapped).toHaveLength(WRAPPED_KEY_BYTES);
    expect(wrapped.includes(key)).toBe(false);
    expect(unwrapDataKey(master, A, wrapped).equals(key)).toBe(true);
    expect(wrapDataKey(master, A, key).equals(wrapped)).toBe(false);
  });

  it('refuses another master key, another dataset, altered or short bytes, without the key in the message', () => {
    const wrapped = wrapDataKey(master, A, key);
    const altered = Buffer.from(wrapped);
    altered[20] = altered[20]! ^ 1;
    for (const [m, id, w] of [
      [randomBytes(32), A, wrapped],
      [master, B, wrapped],
      [master, A, altered],
      [master, A, wrapped.subarray(1)],
    ] as const) {
      expect(() => unwrapDataKey(m, id, w)).toThrow(
        `the data key of dataset ${id} does not unwrap`,
      );
    }
  });
});
