// How secrets are kept at rest: passwords as scrypt strings, tokens and credentials as SHA-256
// digests, never in the clear. It sits in db/ because repositories mint and check secrets in the
// same statement that stores them, and repositories import nothing but db/.
import { createHash, randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

const N = 16384;
const R = 8;
const P = 1;
const KEY_LEN = 32;

/**
 * Hash a password with scrypt; the parameters travel in the string so they can grow later.
 *
 * @example await hashPassword('hunter2') // 'scrypt$16384$8$1$<salt>$<hash>'
 */
export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, KEY_LEN, { N, r: R, p: P, maxmem: 64 << 20 });
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
}

/** Check a password against {@link hashPassword}'s output in constant time. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split('$');
  if (scheme !== 'scrypt' || !salt || !hash) return false;
  const expected = Buffer.from(hash, 'base64');
  const actual = await scryptAsync(password, Buffer.from(salt, 'base64'), expected.length, {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    maxmem: 64 << 20,
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

/** A password hash to verify against when the user does not exist, so timing reveals nothing. */
export const DUMMY_PASSWORD_HASH = `scrypt$${N}$${R}$${P}$${Buffer.alloc(16).toString('base64')}$${Buffer.alloc(KEY_LEN).toString('base64')}`;

/** SHA-256 of a high-entropy secret (tokens, credentials): enough, since they cannot be guessed. */
export function sha256(secret: string): Buffer {
  return createHash('sha256').update(secret).digest();
}

/** A random URL-safe secret of `bytes` bytes of entropy, with an optional readable prefix. */
export function randomSecret(bytes = 32, prefix = ''): string {
  return prefix + randomBytes(bytes).toString('base64url');
}

/** Constant-time equality of two digests. */
export function sameDigest(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}
