import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { openMorsel, sealMorsel } from '@freeloader/protocol';
import { describe, expect, it } from 'vitest';
import { morselCipherKind, openInPlace, sealInPlace } from './morsel-cipher.js';

const key = randomBytes(32);
const id = 'b3f3c0de-0000-4000-8000-000000000001';

/** A morsel's plain bytes in memory a hash worker would see: a view of a SharedArrayBuffer. */
function sharedCopy(bytes: Buffer, lead = 16): Uint8Array {
  const view = new Uint8Array(new SharedArrayBuffer(bytes.length + lead), lead, bytes.length);
  view.set(bytes);
  return view;
}

describe('morsel cipher (AES-256-GCM in place)', () => {
  it('is the native addon on this machine (npm ci builds it where a compiler is)', () => {
    // CI machines install g++ and make (.ci/apt-packages): a missing addon there is a build bug,
    // not a fallback to accept silently.
    let compiler = true;
    try {
      execFileSync('g++', ['--version'], { stdio: 'ignore' });
    } catch {
      compiler = false;
    }
    if (process.platform === 'linux' && compiler && process.env.FREELOADER_NATIVE !== 'off') {
      expect(morselCipherKind()).toBe('native');
    }
  });

  it.each([
    ['an empty morsel', 0],
    ['one byte', 1],
    ['a partial block', 4_095],
    ['a whole morsel', 1 << 20],
    ['a short last morsel', 300_001],
  ])('seals and opens %s in place, interchangeably with node:crypto', (_name, length) => {
    const plain = randomBytes(length);
    // Sealed here, opened by @freeloader/protocol (node:crypto): the same nonce, AAD and tag.
    const sealed = Buffer.from(plain);
    const tag = sealInPlace(key, id, 9, sealed);
    const reference = Buffer.from(plain);
    expect(sealMorsel(key, id, 9, reference).equals(tag)).toBe(true);
    expect(sealed.equals(reference)).toBe(true);
    if (length > 0) expect(sealed.equals(plain)).toBe(false);
    // Opened here, in a view of shared memory at an odd offset, as the hash workers do.
    const view = sharedCopy(sealed, 16 + 3);
    expect(openInPlace(key, id, 9, view, tag)).toBe(true);
    expect(Buffer.from(view).equals(plain)).toBe(true);
    const back = Buffer.from(sealed);
    expect(openMorsel(key, id, 9, back, tag)).toBe(true);
    expect(back.equals(plain)).toBe(true);
  });

  it.each([
    ['a flipped ciphertext byte', (d: Uint8Array) => (d[1234] = d[1234]! ^ 0x01), 7, id],
    ['another morsel index (its nonce)', () => undefined, 8, id],
    ['another dataset (the AAD)', () => undefined, 7, 'another-dataset'],
  ])('rejects %s', (_name, alter, index, dataset) => {
    const data = randomBytes(1 << 16);
    const tag = sealInPlace(key, id, 7, data);
    const view = sharedCopy(data);
    alter(view);
    expect(openInPlace(key, dataset, index, view, tag)).toBe(false);
  });

  it('rejects a flipped tag byte and another key', () => {
    const data = randomBytes(5000);
    const tag = sealInPlace(key, id, 0, data);
    const badTag = Buffer.from(tag);
    badTag[15] = badTag[15]! ^ 0x80;
    expect(openInPlace(key, id, 0, sharedCopy(data), badTag)).toBe(false);
    expect(openInPlace(randomBytes(32), id, 0, sharedCopy(data), tag)).toBe(false);
  });

  it.runIf(morselCipherKind() === 'native')('throws a TypeError on malformed arguments', () => {
    const data = randomBytes(64);
    const tag = sealInPlace(key, id, 0, data);
    expect(() => openInPlace(key.subarray(0, 16), id, 0, data, tag)).toThrow(TypeError);
    expect(() => openInPlace(key, id, 0, data, tag.subarray(0, 8))).toThrow(TypeError);
    expect(() => openInPlace(key, id, 0, new Uint16Array(8) as unknown as Uint8Array, tag)).toThrow(
      /data: a Uint8Array/,
    );
  });
});
