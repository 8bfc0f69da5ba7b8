import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { join } from 'node:path';
import {
  caFingerprint,
  FreeLoaderError,
  MANAGER_CA_VALIDITY_DAYS,
  MANAGER_CERT_RENEW_BEFORE_DAYS,
  MANAGER_CERT_VALIDITY_DAYS,
} from '@freeloader/protocol';
import { certStillServes, createCa, issueServerCert, type KeyedCert } from './certificates.js';

/** What the manager serves HTTPS with, and what agents pin. */
export interface TlsMaterial {
  /** The server certificate (PEM; may be a chain) and its key. */
  certPem: string;
  keyPem: string;
  /** The CA agents and the CLI trust for this manager (PEM). */
  caPem: string;
  /** `sha256:<hex>` of the CA certificate: what join tokens carry. */
  fingerprint: string;
  /** Where the files are (for the log line and the README). */
  dir: string;
}

/** Certificate files the admin gives instead of the generated CA. */
export interface GivenTls {
  certFile: string;
  keyFile: string;
  /** The CA that issued `certFile`; unset, the last certificate in `certFile` is taken. */
  caFile?: string;
}

/** The generated files, under `$FREELOADER_HOME/manager/tls`. */
export function tlsDir(home: string): string {
  return join(home, 'manager', 'tls');
}

const FILES = {
  caCert: 'ca.pem',
  caKey: 'ca-key.pem',
  cert: 'server.pem',
  key: 'server-key.pem',
} as const;

/** Write atomically (temp + rename) with `mode`: a crash never leaves half a key. */
async function writeAtomic(path: string, text: string, mode: number): Promise<void> {
  const tmp = `${path}.${process.pid}.tmp`;
  await writeFile(tmp, text, { mode });
  await chmod(tmp, mode);
  await rename(tmp, path);
}

/**
 * The manager's TLS material: the admin's files when given, else the CA and server certificate
 * under `$FREELOADER_HOME/manager/tls`, created at first start and reused afterwards. The CA
 * is never replaced (every enrolled agent pins it); the server certificate is reissued from it
 * when it no longer names every one of `names` or is about to expire. Keys are mode 0600.
 *
 * @example const tls = await loadOrCreateTls('/var/lib/freeloader', ['ws-17', 'localhost']);
 */
export async function loadOrCreateTls(
  home: string,
  names: readonly string[],
  given?: GivenTls,
): Promise<TlsMaterial> {
  if (given) return loadGivenTls(given);
  const dir = tlsDir(home);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const path = (f: keyof typeof FILES): string => join(dir, FILES[f]);
  let ca: KeyedCert;
  if (existsSync(path('caCert')) && existsSync(path('caKey'))) {
    ca = {
      certPem: await readFile(path('caCert'), 'utf8'),
      keyPem: await readFile(path('caKey'), 'utf8'),
    };
  } else {
    ca = createCa(`FreeLoader manager CA (${hostname()})`, MANAGER_CA_VALIDITY_DAYS);
    // The key first: a CA certificate without its key could never issue again.
    await writeAtomic(path('caKey'), ca.keyPem, 0o600);
    await writeAtomic(path('caCert'), ca.certPem, 0o644);
  }
  let server: KeyedCert | undefined;
  if (existsSync(path('cert')) && existsSync(path('key'))) {
    const certPem = await readFile(path('cert'), 'utf8');
    if (certStillServes(certPem, ca.certPem, names, MANAGER_CERT_RENEW_BEFORE_DAYS)) {
      server = { certPem, keyPem: await readFile(path('key'), 'utf8') };
    }
  }
  if (!server) {
    server = issueServerCert(ca, names, MANAGER_CERT_VALIDITY_DAYS);
    await writeAtomic(path('key'), server.keyPem, 0o600);
    await writeAtomic(path('cert'), server.certPem, 0o644);
  }
  return {
    certPem: server.certPem,
    keyPem: server.keyPem,
    caPem: ca.certPem,
    fingerprint: caFingerprint(ca.certPem),
    dir,
  };
}

async function loadGivenTls(given: GivenTls): Promise<TlsMaterial> {
  const read = async (file: string, what: string): Promise<string> => {
    try {
      return await readFile(file, 'utf8');
    } catch (e) {
      throw new FreeLoaderError(
        'VALIDATION_FAILED',
        `cannot read the TLS ${what} ${file}: ${(e as Error).message}`,
        undefined,
        e,
      );
    }
  };
  const certPem = await read(given.certFile, 'certificate');
  const keyPem = await read(given.keyFile, 'key');
  const caPem = given.caFile
    ? await read(given.caFile, 'CA certificate')
    : lastCertificate(certPem, given.certFile);
  return { certPem, keyPem, caPem, fingerprint: caFingerprint(caPem), dir: given.certFile };
}

/** The last PEM block of a chain file: its root, or the certificate itself when self-signed. */
function lastCertificate(chainPem: string, file: string): string {
  const blocks = chainPem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g);
  if (!blocks) {
    throw new FreeLoaderError('VALIDATION_FAILED', `${file} holds no PEM certificate`);
  }
  return blocks[blocks.length - 1]! + '\n';
}
