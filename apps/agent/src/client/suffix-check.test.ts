import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sealMorsel, type DatasetMap } from '@freeloader/protocol';
import { MorselSealing } from './morsel-sealing.js';
import { suffixCheck } from './suffix-check.js';

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** An encrypted dataset of two morsels: morsel 0 was stored (it has a tag), morsel 1 never. */
function encrypted(plain: Buffer) {
  const key = randomBytes(32);
  const id = randomUUID();
  const tag0 = sealMorsel(key, id, 0, Buffer.from(plain));
  const map = {
    dataset: { id },
    dataKey: key.toString('base64'),
    tags: tag0.toString('hex') + '00'.repeat(16),
  } as unknown as DatasetMap;
  const tags = Buffer.from(map.tags!, 'hex');
  return MorselSealing.of(map, (i) => Promise.resolve(tags.subarray(i * 16, (i + 1) * 16)))!;
}

describe('suffixCheck', () => {
  const plain = randomBytes(4096);

  it('encrypted, with a tag: the plain text sealed again must give the map tag', async () => {
    const sealing = encrypted(plain);
    const buf = Buffer.from(plain);
    const check = suffixCheck({
      index: 0,
      expected: sha(randomBytes(8)), // the ciphertext's hash: never compared with plain text
      hash: async () => sha(buf),
      plain: () => buf,
      sealing,
    });
    // Whatever the node claims, the tag decides.
    expect(await check('nonsense')).toBe(true);
    expect(await check(undefined)).toBe(true);
    buf[17] = buf[17]! ^ 1;
    expect(await check(sha(buf))).toBe(false);
    expect(await check(undefined)).toBe(false);
  });

  it('encrypted, never stored: the downloader hash, and the source as it is', async () => {
    const sealing = encrypted(plain);
    const buf = Buffer.from(plain);
    const check = suffixCheck({
      index: 1,
      expected: '0'.repeat(64),
      hash: async () => sha(buf),
      plain: () => buf,
      sealing,
    });
    expect(await check(sha(plain))).toBe(true);
    expect(await check(sha(randomBytes(8)))).toBe(false);
    expect(await check(undefined)).toBe(true);
  });

  it('in clear: the manager hash when it has one, else the downloader hash', async () => {
    const buf = Buffer.from(plain);
    const common = { index: 0, hash: async () => sha(buf), plain: () => buf, sealing: undefined };
    const known = suffixCheck({ ...common, expected: sha(plain) });
    expect(await known('whatever')).toBe(true);
    const wrong = suffixCheck({ ...common, expected: sha(randomBytes(8)) });
    expect(await wrong(sha(plain))).toBe(false);
    expect(await wrong(undefined)).toBe(false);
    const none = suffixCheck({ ...common, expected: '' });
    expect(await none(sha(plain))).toBe(true);
    expect(await none('')).toBe(false);
  });
});
