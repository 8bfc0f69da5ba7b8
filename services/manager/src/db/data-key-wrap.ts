// How dataset keys are kept at rest: wrapped with the manager's master key (AES-256-GCM, the
// dataset id as AAD so a wrapped key copied onto another dataset's row does not open). Kept in
// db/ beside stored-secrets.ts: repositories import nothing but db/.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { DATA_KEY_BYTES, FreeLoaderError } from '@freeloader/protocol';

const NONCE_BYTES = 12;
const TAG_BYTES = 16;
/** nonce ‖ wrapped key ‖ tag. */
export const WRAPPED_KEY_BYTES = NONCE_BYTES + DATA_KEY_BYTES + TAG_BYTES;

/**
 * Wrap a dataset's data key with the master key (random nonce: a key is wrapped once).
 *
 * @example unwrapDataKey(master, id, wrapDataKey(master, id, key)).equals(key) // true
 */
export function wrapDataKey(master: Buffer, datasetId: string, key: Buffer): Buffer {
  const nonce = randomBytes(NONCE_BYTES);
  const cipher = createCipheriv('aes-256-gcm', master, nonce);
  cipher.setAAD(Buffer.from(datasetId, 'utf8'));
  const wrapped = Buffer.concat([cipher.update(key), cipher.final()]);
  return Buffer.concat([nonce, wrapped, cipher.getAuthTag()]);
}

/** The data key inside {@link wrapDataKey}'s output; throws INTERNAL if it does not open. */
export function unwrapDataKey(master: Buffer, datasetId: string, wrapped: Buffer): Buffer {
  try {
    if (wrapped.length !== WRAPPED_KEY_BYTES) throw new Error('length');
    const decipher = createDecipheriv('aes-256-gcm', master, wrapped.subarray(0, NONCE_BYTES));
    decipher.setAAD(Buffer.from(datasetId, 'utf8'));
    decipher.setAuthTag(wrapped.subarray(NONCE_BYTES + DATA_KEY_BYTES));
    const key = decipher.update(wrapped.subarray(NONCE_BYTES, NONCE_BYTES + DATA_KEY_BYTES));
    decipher.final();
    return key;
  } catch {
    // Never the key material in the message: only which dataset.
    throw new FreeLoaderError('INTERNAL', `the data key of dataset ${datasetId} does not unwrap`);
  }
}
