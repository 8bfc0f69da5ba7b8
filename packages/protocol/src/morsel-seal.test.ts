import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  dataKeyOf,
  hasMorselTag,
  morselNonce,
  morselTagOf,
  openMorsel,
  plainMatchesTag,
  sealMorsel,
} from './morsel-seal.js';

const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

describe('sealed morsels', () => {
  const key = randomBytes(32);
  const plain = randomBytes(64 * 1024);

  it('seals in place to the same length and opens back to the plain text', () => {
    const data = Buffer.from(plain);
    const tag = sealMorsel(key, ID, 7, data);
    expect(tag).toHaveLength(16);
    expect(data.equals(plain)).toBe(false);
    expect(openMorsel(key, ID, 7, data, tag)).toBe(true);
    expect(data.equals(plain)).toBe(true);
  });

  it('gives every copy the same ciphertext (nonce from the index only)', () => {
    const a = Buffer.from(plain);
    const b = Buffer.from(plain);
    expect(sealMorsel(key, ID, 3, a).equals(sealMorsel(key, ID, 3, b))).toBe(true);
    expect(a.equals(b)).toBe(true);
    expect(morselNonce(1).toString('hex')).toBe('464c6d310000000000000001');
  });

  it('rejects a flipped byte, another index, dataset or key, and leaves the bytes alone', () => {
    const data = Buffer.from(plain);
    const tag = sealMorsel(key, ID, 5, data);
    const sealed = Buffer.from(data);
    data[100] = data[100]! ^ 1;
    expect(openMorsel(key, ID, 5, data, tag)).toBe(false);
    data[100] = data[100] ^ 1;
    expect(data.equals(sealed)).toBe(true);
    expect(openMorsel(key, ID, 6, data, tag)).toBe(false);
    expect(openMorsel(key, ID.replace('0f', '1f'), 5, data, tag)).toBe(false);
    expect(openMorsel(randomBytes(32), ID, 5, data, tag)).toBe(false);
  });

  it('reads keys and tags as the map carries them', () => {
    expect(dataKeyOf(key.toString('base64')).equals(key)).toBe(true);
    expect(() => dataKeyOf('c2hvcnQ=')).toThrow(/32 bytes/);
    const tags = 'aa'.repeat(16) + 'bb'.repeat(16);
    expect(morselTagOf(tags, 1).toString('hex')).toBe('bb'.repeat(16));
    expect(() => morselTagOf(tags, 2)).toThrow(/no AES-GCM tag/);
  });

  it('checks plain text against a tag without changing it; knows which morsels have a tag', () => {
    const sealed = Buffer.from(plain);
    const tag = sealMorsel(key, ID, 7, sealed);
    const data = Buffer.from(plain);
    expect(plainMatchesTag(key, ID, 7, data, tag)).toBe(true);
    expect(data.equals(plain)).toBe(true);
    expect(plainMatchesTag(key, ID, 8, data, tag)).toBe(false);
    data[9] = data[9]! ^ 1;
    expect(plainMatchesTag(key, ID, 7, data, tag)).toBe(false);
    const tags = '00'.repeat(16) + tag.toString('hex');
    expect([0, 1, 2].map((i) => hasMorselTag(tags, i))).toEqual([false, true, false]);
  });
});
