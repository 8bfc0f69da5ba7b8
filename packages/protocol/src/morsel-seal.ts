import { createCipheriv, createDecipheriv, timingSafeEqual } from 'node:crypto';
import { FreeLoaderError } from './errors.js';
import { DATA_KEY_BYTES, MORSEL_NONCE_BYTES, MORSEL_TAG_BYTES } from './limits.js';

/**
 * Encrypted morsels (issue 17 item 3; seed 000 §4.3.2's client-side encryption filter).
 *
 * Each dataset import gets its own random AES-256 key, so a nonce need only be unique per morsel
 * index: nonce = "FLm1" ‖ index (u64 BE). It depends on nothing else — not the copy, not the
 * donor — so every copy of a morsel is the same ciphertext, donors repair by copying bytes and
 * the SHA-256 of the stored bytes stays the one integrity reference donors check without the key.
 * The dataset id is the AAD, so a morsel cannot be passed off as another dataset's. Re-importing
 * (a new generation of the bytes) always comes with a new key: the same (key, nonce) never seals
 * two different plaintexts.
 *
 * Sealed length = plain length (GCM is a stream mode); the 16-byte tag is kept in the map beside
 * the hash, so morsel sizes, store slots and wire frames are unchanged.
 */

// A string, not a Buffer: this module is in the package the console's browser bundle imports,
// where a Buffer made at load time throws (no Buffer there) and blanks the whole page.
const NONCE_PREFIX = 'FLm1';
const CIPHER = 'aes-256-gcm';

/** A dataset's key as the manager hands it out (base64) → 32 bytes; throws on anything else. */
export function dataKeyOf(base64: string): Buffer {
  const key = Buffer.from(base64, 'base64');
  if (key.length !== DATA_KEY_BYTES) {
    throw new FreeLoaderError('VALIDATION_FAILED', `a data key has ${DATA_KEY_BYTES} bytes`);
  }
  return key;
}

/**
 * The nonce of morsel `index`.
 *
 * @example morselNonce(1).toString('hex') // '464c6d310000000000000001'
 */
export function morselNonce(index: number): Buffer {
  const nonce = Buffer.alloc(MORSEL_NONCE_BYTES);
  nonce.write(NONCE_PREFIX, 0, 'latin1');
  nonce.writeBigUInt64BE(BigInt(index), NONCE_PREFIX.length);
  return nonce;
}

/** The AES-256-GCM cipher of morsel `index` of `datasetId` (its nonce, the id as AAD). */
function morselCipher(key: Buffer, datasetId: string, index: number) {
  return createCipheriv(CIPHER, key, morselNonce(index), {
    authTagLength: MORSEL_TAG_BYTES,
  }).setAAD(Buffer.from(datasetId, 'utf8'));
}

/**
 * Seal morsel `index` of `datasetId` in place: `data` becomes its ciphertext; returns the tag.
 *
 * @example
 *   const tag = sealMorsel(key, id, 0, buf); // buf now holds ciphertext, same length
 *   openMorsel(key, id, 0, buf, tag);        // and plain text again
 */
export function sealMorsel(key: Buffer, datasetId: string, index: number, data: Buffer): Buffer {
  const cipher = morselCipher(key, datasetId, index);
  // node:crypto has no in-place API: the output is copied back so callers keep their buffer.
  const sealed = cipher.update(data);
  sealed.copy(data);
  cipher.final();
  return cipher.getAuthTag();
}

/**
 * Open morsel `index` in place (`data` becomes plain text) after checking its tag: true when
 * opened, false when the tag does not match (wrong key, dataset, index or altered bytes), and
 * then `data` is left as it was.
 */
export function openMorsel(
  key: Buffer,
  datasetId: string,
  index: number,
  data: Buffer,
  tag: Buffer,
): boolean {
  const decipher = createDecipheriv(CIPHER, key, morselNonce(index), {
    authTagLength: MORSEL_TAG_BYTES,
  }).setAAD(Buffer.from(datasetId, 'utf8'));
  decipher.setAuthTag(tag);
  const plain = decipher.update(data);
  try {
    decipher.final();
  } catch {
    return false;
  }
  plain.copy(data);
  return true;
}

/**
 * Whether plain bytes `data` are morsel `index` of `datasetId` as it was sealed with `tag`:
 * seals a copy (the nonce depends on the index only, so the same plain text always gives the
 * same tag) and compares tags; `data` is left as it was. This is how a reader checks plain
 * text it did not get from a donor (a patching node's download) against the map's tag.
 *
 * @example plainMatchesTag(key, id, 3, plain, morselTagOf(map.tags, 3)) // → true unless altered
 */
export function plainMatchesTag(
  key: Buffer,
  datasetId: string,
  index: number,
  data: Buffer,
  tag: Buffer,
): boolean {
  const cipher = morselCipher(key, datasetId, index);
  cipher.update(data); // the ciphertext itself is not needed, only the tag over it
  cipher.final();
  const sealed = cipher.getAuthTag();
  return sealed.length === tag.length && timingSafeEqual(sealed, tag);
}

/** The tag of morsel `index` in a map's `tags` (hex, 32 chars per morsel). */
export function morselTagOf(tags: string, index: number): Buffer {
  const hexLength = MORSEL_TAG_BYTES * 2;
  const hex = tags.slice(index * hexLength, (index + 1) * hexLength);
  if (hex.length !== hexLength) {
    throw new FreeLoaderError('HASH_MISMATCH', `no AES-GCM tag known for morsel ${index}`);
  }
  return Buffer.from(hex, 'hex');
}

/**
 * Whether a map's `tags` hold a tag for morsel `index` (a morsel never stored — the uncached
 * suffix of a dataset imported as a prefix — has none: missing, or all zeros).
 *
 * @example hasMorselTag('00'.repeat(16) + 'ab'.repeat(16), 0) // → false (index 1: true)
 */
export function hasMorselTag(tags: string, index: number): boolean {
  const hexLength = MORSEL_TAG_BYTES * 2;
  const hex = tags.slice(index * hexLength, (index + 1) * hexLength);
  return hex.length === hexLength && /[^0]/.test(hex);
}
