import { MORSEL_TAG_BYTES, morselNonce, openMorsel, sealMorsel } from '@freeloader/protocol';
import { nativeAddon } from './addon.js';

/**
 * AES-256-GCM of a morsel in place (issue 19): the agent's native addon (`addon.ts`) when it is
 * built, else node:crypto through @freeloader/protocol's `sealMorsel`/`openMorsel` (same nonce,
 * AAD and tag, so either side opens what the other sealed).
 *
 * Why native: node:crypto has no in-place cipher. Every `update()` returns a fresh output the
 * size of its input, which is then copied back: on the AMD VM of issue 19 (page faults are dear
 * there) opening 1 MiB morsels cost 2.1–3.0 CPU-s per GiB through node:crypto against 0.24 for the
 * same OpenSSL call on the bytes where they lie (`_aesni_ctr32_ghash_6x` was 11 % of the time;
 * allocation, page faults, the copy back and garbage collection the rest). The addon calls the
 * OpenSSL Node itself is built with, so nothing else is linked in.
 */
const addon = nativeAddon();

/** Which implementation seals and opens morsels in this process. */
export function morselCipherKind(): 'native' | 'node:crypto' {
  return addon ? 'native' : 'node:crypto';
}

/**
 * Seal morsel `index` of `datasetId` in place; returns its tag.
 *
 * @example
 *   const tag = sealInPlace(key, id, 7, data); // data is now ciphertext
 *   openInPlace(key, id, 7, data, tag);         // → true, data is plain text again
 */
export function sealInPlace(key: Buffer, datasetId: string, index: number, data: Buffer): Buffer {
  if (!addon) return sealMorsel(key, datasetId, index, data);
  const tag = Buffer.allocUnsafe(MORSEL_TAG_BYTES);
  addon.seal(key, morselNonce(index), Buffer.from(datasetId, 'utf8'), data, tag);
  return tag;
}

/**
 * Open sealed morsel `index` in place: true once `data` is its plain text, false when the tag
 * does not match — and then `data` is unusable (the addon deciphers before the tag can fail):
 * the caller fetches the morsel again.
 */
export function openInPlace(
  key: Buffer,
  datasetId: string,
  index: number,
  data: Uint8Array,
  tag: Buffer,
): boolean {
  if (!addon) {
    const view = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
    return openMorsel(key, datasetId, index, view, tag);
  }
  return addon.open(key, morselNonce(index), Buffer.from(datasetId, 'utf8'), data, tag);
}
