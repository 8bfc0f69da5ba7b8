import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Deterministic pseudo-random bytes (xorshift32), so a test can recompute any range of a
 * served dataset without keeping a copy.
 *
 * @example generateContent(1024, 7).equals(generateContent(1024, 7)) === true
 */
export function generateContent(size: number, seed = 1): Buffer {
  const out = Buffer.allocUnsafe(size);
  let x = (seed * 2654435761) >>> 0 || 1;
  let i = 0;
  for (; i + 4 <= size; i += 4) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    out.writeUInt32LE(x >>> 0, i);
  }
  for (; i < size; i++) out[i] = (x >>> (8 * (i % 4))) & 0xff;
  return out;
}

export interface TestCert {
  key: string;
  cert: string;
}

let cached: TestCert | null | undefined;

/**
 * A throwaway self-signed certificate for 127.0.0.1 / localhost, made once per process.
 * Node's crypto cannot issue X.509 certificates, so this shells out to `openssl`; null when
 * openssl is not installed (tests that need TLS then skip).
 */
export function selfSignedCert(): TestCert | null {
  if (cached !== undefined) return cached;
  const dir = mkdtempSync(join(tmpdir(), 'fl-cert-'));
  try {
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
        '-days',
        '2',
        '-subj',
        '/CN=127.0.0.1',
        '-addext',
        'subjectAltName=IP:127.0.0.1,DNS:localhost',
      ],
      { stdio: 'ignore', timeout: 20_000 },
    );
    cached = {
      key: readFileSync(join(dir, 'key.pem'), 'utf8'),
      cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    };
  } catch {
    cached = null;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return cached;
}
