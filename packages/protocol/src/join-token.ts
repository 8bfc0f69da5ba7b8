import { createHash, X509Certificate } from 'node:crypto';
import { FreeLoaderError } from './errors.js';

/**
 * Join tokens carry the fingerprint of the manager's CA certificate after the secret, as
 * kubeadm's `--discovery-token-ca-cert-hash` and k3s's `K10<hash>::` tokens do: whoever holds
 * the token can tell the real manager from an impostor before sending it anything secret.
 * Only the secret part reaches the manager; the fingerprint is not a secret.
 */
const SEPARATOR = '::';
const FINGERPRINT = /^sha256:[0-9a-f]{64}$/;

export interface ParsedJoinToken {
  /** What the manager checks (`flj_…`). */
  secret: string;
  /** `sha256:<hex>` of the manager's CA certificate (DER), when the token carries one. */
  caFingerprint?: string;
}

/**
 * The SHA-256 fingerprint of a certificate's DER encoding, as `sha256:<64 hex>` (what
 * `openssl x509 -noout -fingerprint -sha256` prints, lower-case and without colons).
 *
 * @example caFingerprint(readFileSync('ca.pem', 'utf8')) // 'sha256:3f1c…'
 */
export function caFingerprint(pem: string): string {
  let der: Buffer;
  try {
    der = new X509Certificate(pem).raw;
  } catch (e) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'not a PEM certificate', undefined, e);
  }
  return `sha256:${createHash('sha256').update(der).digest('hex')}`;
}

/**
 * The token an admin hands out: the secret, then the CA fingerprint when there is one.
 *
 * @example formatJoinToken('flj_abc', 'sha256:00…ff') // 'flj_abc::sha256:00…ff'
 */
export function formatJoinToken(secret: string, fingerprint?: string): string {
  return fingerprint ? `${secret}${SEPARATOR}${fingerprint}` : secret;
}

/**
 * Split a join token into its secret and CA fingerprint; a token without `::` (minted before
 * TLS) has no fingerprint. Throws JOIN_TOKEN_INVALID on a malformed fingerprint.
 *
 * @example parseJoinToken('flj_abc::sha256:00…ff') // { secret: 'flj_abc', caFingerprint: 'sha256:00…ff' }
 */
export function parseJoinToken(token: string): ParsedJoinToken {
  const text = token.trim();
  const at = text.indexOf(SEPARATOR);
  if (at < 0) return { secret: text };
  const fingerprint = text.slice(at + SEPARATOR.length).toLowerCase();
  if (!FINGERPRINT.test(fingerprint)) {
    throw new FreeLoaderError(
      'JOIN_TOKEN_INVALID',
      'the join token ends in a malformed CA fingerprint (expected "::sha256:" and 64 hex digits); copy the whole token again',
    );
  }
  return { secret: text.slice(0, at), caFingerprint: fingerprint };
}
