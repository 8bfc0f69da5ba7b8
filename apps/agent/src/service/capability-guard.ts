import { createPublicKey, type KeyObject } from 'node:crypto';
import {
  CAPABILITY_CLOCK_SKEW_S,
  FreeLoaderError,
  verifyCapability,
  type CapabilityOp,
} from '@freeloader/protocol';

/** Verified (token, dataset, op) triples remembered, so a hot reader pays one Ed25519 verify. */
const MAX_REMEMBERED = 1024;

export interface CapabilityGuardOptions {
  agentId: () => string | undefined;
  managerPublicKey: () => string | undefined;
}

/**
 * Checks morsel requests' capabilities against the manager's public key (learned at enrollment).
 * A token that verified once for a dataset and op is remembered until it expires, so reading a
 * dataset morsel by morsel costs one signature check, not one per morsel.
 *
 * @example guard.check(token, datasetId, 'read') // → 'client:alice'; throws CAPABILITY_* or UNAVAILABLE
 */
export class CapabilityGuard {
  private keyPem: string | undefined;
  private key: KeyObject | undefined;
  /** Memo key → the token's expiry (unix seconds) and subject. */
  private readonly verified = new Map<string, { exp: number; sub: string }>();

  constructor(private readonly opts: CapabilityGuardOptions) {}

  /** Verify `token` for `op` on `dataset`; returns its subject (who it was issued to). */
  check(token: string | undefined, dataset: string, op: CapabilityOp): string {
    const pem = this.opts.managerPublicKey();
    if (!pem) {
      throw new FreeLoaderError('UNAVAILABLE', 'this agent is not enrolled yet; try another donor');
    }
    if (pem !== this.keyPem) {
      this.key = createPublicKey(pem);
      this.keyPem = pem;
      this.verified.clear();
    }
    const agentId = this.opts.agentId();
    const now = Math.floor(Date.now() / 1000);
    const memo = `${op}\n${dataset}\n${agentId ?? ''}\n${token ?? ''}`;
    const known = this.verified.get(memo);
    if (known !== undefined && known.exp + CAPABILITY_CLOCK_SKEW_S >= now) return known.sub;
    this.verified.delete(memo);
    const payload = verifyCapability(this.key!, token, {
      dataset,
      op,
      now,
      ...(agentId ? { agentId } : {}),
    });
    if (this.verified.size >= MAX_REMEMBERED) {
      // Oldest first: Map iteration follows insertion order.
      this.verified.delete(this.verified.keys().next().value!);
    }
    this.verified.set(memo, { exp: payload.exp, sub: payload.sub });
    return payload.sub;
  }
}

/** The capability from `Authorization: Bearer <cap>`, else from `?cap=`. */
export function capabilityFrom(
  authorization: string | undefined,
  query: { cap?: string | undefined } | undefined,
): string | undefined {
  if (authorization) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (m) return m[1];
  }
  return query?.cap || undefined;
}
