import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import type { KeyObject } from 'node:crypto';
import { FreeLoaderError } from './errors.js';
import { CAPABILITY_CLOCK_SKEW_S } from './limits.js';

/**
 * A capability is the manager's signed permission to touch one dataset's morsels.
 * Agents verify it with the manager's Ed25519 public key learned at enrollment, so a read
 * never needs a round trip to the manager.
 *
 * Wire form: `fl1.<base64url(JSON payload)>.<base64url(signature)>`, sent as
 * `Authorization: Bearer <token>` (or `?cap=<token>` for curl debugging).
 */
export type CapabilityOp = 'read' | 'write' | 'delete';

export interface CapabilityPayload {
  /** Dataset the capability covers. */
  ds: string;
  /** Operations allowed. */
  ops: CapabilityOp[];
  /** Who it was issued to (agent id or user id), for logs and audit. */
  sub: string;
  /** Agents that accept it; absent means any agent holding the dataset. */
  aud?: string[];
  /** Expiry, Unix seconds. */
  exp: number;
}

const REPAIR_SUBJECT_PREFIX = 'repair:';

/**
 * Subject of a repair job's read capability. A donor serves reads under it as background
 * traffic: they yield to foreground (client) reads of the same donor.
 *
 * @example repairSubject('5b0e…') // → 'repair:5b0e…'; isRepairSubject('alice') → false
 */
export function repairSubject(destination: string): string {
  return `${REPAIR_SUBJECT_PREFIX}${destination}`;
}

/** Whether a capability subject is a repair job's ({@link repairSubject}). */
export function isRepairSubject(sub: string): boolean {
  return sub.startsWith(REPAIR_SUBJECT_PREFIX);
}

const PREFIX = 'fl1';

export function generateSigningKeys(): { privateKeyPem: string; publicKeyPem: string } {
  const { privateKey, publicKey } = generateKeyPairSync('ed25519');
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

export function signCapability(privateKey: KeyObject | string, payload: CapabilityPayload): string {
  const key = typeof privateKey === 'string' ? createPrivateKey(privateKey) : privateKey;
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const sig = sign(null, Buffer.from(`${PREFIX}.${body}`), key).toString('base64url');
  return `${PREFIX}.${body}.${sig}`;
}

export interface CapabilityCheck {
  dataset: string;
  op: CapabilityOp;
  /** The verifying agent's id, checked against `aud` when present. */
  agentId?: string;
  /** Now, Unix seconds (injectable for tests). */
  now?: number;
}

/**
 * Verify a capability token and that it allows `op` on `dataset`; throws a coded error otherwise.
 *
 * @example verifyCapability(pub, token, { dataset: 'd1', op: 'read' }) // → payload, or throws CAPABILITY_*
 */
export function verifyCapability(
  publicKey: KeyObject | string,
  token: string | undefined,
  check: CapabilityCheck,
): CapabilityPayload {
  if (!token) throw new FreeLoaderError('CAPABILITY_MISSING', 'a capability is required');
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== PREFIX) {
    throw new FreeLoaderError('CAPABILITY_INVALID', 'malformed capability');
  }
  const key = typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey;
  const ok = verify(
    null,
    Buffer.from(`${PREFIX}.${parts[1]}`),
    key,
    Buffer.from(parts[2]!, 'base64url'),
  );
  if (!ok) throw new FreeLoaderError('CAPABILITY_INVALID', 'capability signature does not verify');
  let payload: CapabilityPayload;
  try {
    payload = JSON.parse(Buffer.from(parts[1]!, 'base64url').toString('utf8')) as CapabilityPayload;
  } catch {
    throw new FreeLoaderError('CAPABILITY_INVALID', 'capability payload is not JSON');
  }
  const now = check.now ?? Math.floor(Date.now() / 1000);
  if (typeof payload.exp !== 'number' || payload.exp + CAPABILITY_CLOCK_SKEW_S < now) {
    throw new FreeLoaderError(
      'CAPABILITY_EXPIRED',
      'capability has expired; ask the manager again',
    );
  }
  if (payload.ds !== check.dataset) {
    throw new FreeLoaderError('CAPABILITY_INVALID', 'capability is for another dataset');
  }
  if (!Array.isArray(payload.ops) || !payload.ops.includes(check.op)) {
    throw new FreeLoaderError('CAPABILITY_INVALID', `capability does not allow ${check.op}`);
  }
  if (payload.aud && check.agentId && !payload.aud.includes(check.agentId)) {
    throw new FreeLoaderError('CAPABILITY_INVALID', 'capability is not for this agent');
  }
  return payload;
}
