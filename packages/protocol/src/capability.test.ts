import { describe, expect, it } from 'vitest';
import {
  generateSigningKeys,
  signCapability,
  verifyCapability,
  type CapabilityPayload,
} from './capability.js';

const keys = generateSigningKeys();
const other = generateSigningKeys();
const now = 1_800_000_000;
const base: CapabilityPayload = { ds: 'd1', ops: ['read'], sub: 'client', exp: now + 60 };

describe('capabilities', () => {
  it('verifies a good capability', () => {
    const tok = signCapability(keys.privateKeyPem, base);
    expect(verifyCapability(keys.publicKeyPem, tok, { dataset: 'd1', op: 'read', now })).toEqual(
      base,
    );
  });

  it.each([
    ['missing', undefined, {}, 'CAPABILITY_MISSING'],
    ['garbage', 'abc', {}, 'CAPABILITY_INVALID'],
    ['other key', signCapability(other.privateKeyPem, base), {}, 'CAPABILITY_INVALID'],
    [
      'expired',
      signCapability(keys.privateKeyPem, { ...base, exp: now - 3600 }),
      {},
      'CAPABILITY_EXPIRED',
    ],
    [
      'other dataset',
      signCapability(keys.privateKeyPem, base),
      { dataset: 'd2' },
      'CAPABILITY_INVALID',
    ],
    [
      'wrong op',
      signCapability(keys.privateKeyPem, base),
      { op: 'write' as const },
      'CAPABILITY_INVALID',
    ],
    [
      'wrong audience',
      signCapability(keys.privateKeyPem, { ...base, aud: ['a1'] }),
      { agentId: 'a2' },
      'CAPABILITY_INVALID',
    ],
  ])('rejects %s', (_name, token, override, code) => {
    expect(() =>
      verifyCapability(keys.publicKeyPem, token, { dataset: 'd1', op: 'read', now, ...override }),
    ).toThrow(expect.objectContaining({ code }));
  });

  it('rejects a tampered payload', () => {
    const tok = signCapability(keys.privateKeyPem, base);
    const [p, , s] = tok.split('.');
    const forged = Buffer.from(JSON.stringify({ ...base, ops: ['read', 'delete'] })).toString(
      'base64url',
    );
    expect(() =>
      verifyCapability(keys.publicKeyPem, `${p}.${forged}.${s}`, {
        dataset: 'd1',
        op: 'delete',
        now,
      }),
    ).toThrow(expect.objectContaining({ code: 'CAPABILITY_INVALID' }));
  });
});
