import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MORSEL_TAG_BYTES, morselNonce, openMorsel, sealMorsel } from '@freeloader/protocol';

/**
 * AES-256-GCM of a morsel in place (issue 19): the agent's small native addon
 * (`apps/agent/native/morsel-crypto`, built by `npm ci`'s postinstall) when it is built, else
 * node:crypto through @freeloader/protocol's `sealMorsel`/`openMorsel` (same nonce, AAD and tag,
 * so either side opens what the other sealed).
 *
 * Why native: node:crypto has no in-place cipher. Every `update()` returns a fresh output the
 * size of its input, which is then copied back: on the AMD VM of issue 19 (page faults are dear
 * there) opening 1 MiB morsels cost 2.1–3.0 CPU-s per GiB through node:crypto against 0.24 for the
 * same OpenSSL call on the bytes where they lie (`_aesni_ctr32_ghash_6x` was 11 % of the time;
 * allocation, page faults, the copy back and garbage collection the rest). The addon calls the
 * OpenSSL Node itself is built with, so nothing else is linked in.
 *
 * `FREELOADER_NATIVE_CRYPTO=off` turns the addon off (benchmarks measure the cost it saves).
 */
export interface MorselCipherAddon {
  /** Decipher `data` in place; false when `tag` does not match (data is then unusable). */
  open(
    key: Uint8Array,
    nonce: Uint8Array,
    aad: Uint8Array,
    data: Uint8Array,
    tag: Uint8Array,
  ): boolean;
  /** Encipher `data` in place and write its tag into `tagOut` (16 bytes). */
  seal(
    key: Uint8Array,
    nonce: Uint8Array,
    aad: Uint8Array,
    data: Uint8Array,
    tagOut: Uint8Array,
  ): void;
}

/** Where the addon is once built (the same path from `src/` and from `dist/`). */
export const MORSEL_CIPHER_ADDON_PATH = fileURLToPath(
  new URL('../../native/morsel-crypto/build/Release/morsel_crypto.node', import.meta.url),
);

/** The addon's path when it is built and not turned off; what a worker thread should load. */
export function morselCipherAddonPath(): string | undefined {
  if (process.env.FREELOADER_NATIVE_CRYPTO === 'off') return undefined;
  return existsSync(MORSEL_CIPHER_ADDON_PATH) ? MORSEL_CIPHER_ADDON_PATH : undefined;
}

function loadAddon(): MorselCipherAddon | undefined {
  const path = morselCipherAddonPath();
  if (path === undefined) return undefined;
  try {
    return createRequire(import.meta.url)(path) as MorselCipherAddon;
  } catch {
    // Built for another Node ABI or platform: node:crypto does the same work, only dearer.
    return undefined;
  }
}

const addon = loadAddon();

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
