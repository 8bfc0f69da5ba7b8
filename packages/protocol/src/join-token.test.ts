import { describe, expect, it } from 'vitest';
import { FreeLoaderError } from './errors.js';
import { formatJoinToken, parseJoinToken } from './join-token.js';

const FP = `sha256:${'ab'.repeat(32)}`;

describe('join tokens with a CA fingerprint', () => {
  it('round-trips the secret and the fingerprint', () => {
    const token = formatJoinToken('flj_s3cr-et_', FP);
    expect(token).toBe(`flj_s3cr-et_::${FP}`);
    expect(parseJoinToken(token)).toEqual({ secret: 'flj_s3cr-et_', caFingerprint: FP });
  });

  it('reads a token minted without a CA (and pasted with spaces) as a bare secret', () => {
    expect(formatJoinToken('flj_x')).toBe('flj_x');
    expect(parseJoinToken(' flj_x \n')).toEqual({ secret: 'flj_x' });
  });

  it('accepts an upper-case fingerprint and rejects a cut or foreign one', () => {
    expect(parseJoinToken(`flj_x::${FP.toUpperCase()}`).caFingerprint).toBe(FP);
    for (const bad of [`flj_x::${FP.slice(0, -2)}`, `flj_x::md5:${'ab'.repeat(16)}`, 'flj_x::']) {
      expect(() => parseJoinToken(bad)).toThrow(FreeLoaderError);
      expect(() => parseJoinToken(bad)).toThrow(/malformed CA fingerprint/);
    }
  });
});
