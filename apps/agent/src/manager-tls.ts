import { Agent, request } from 'undici';
import { caFingerprint, FreeLoaderError, type ManagerCaView } from '@freeloader/protocol';

/** How long fetching the manager's CA may take before it counts as unreachable (milliseconds). */
const CA_FETCH_TIMEOUT_MS = 15_000;

/**
 * The connection pool to a manager: with `ca`, only that CA is trusted for the manager (the
 * system's roots are not), so a pinned agent or CLI accepts no other certificate, however
 * well-signed.
 *
 * @example new ManagerClient(url) uses managerDispatcher(undefined, { connections: 8 })
 */
export function managerDispatcher(ca: string | undefined, options: Agent.Options = {}): Agent {
  return new Agent({ ...options, ...(ca ? { connect: { ca } } : {}) });
}

/** Certificate checks that fail when the manager's certificate is not one this client trusts. */
const UNTRUSTED_CODES = new Set([
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_GET_ISSUER_CERT',
  'CERT_SIGNATURE_FAILURE',
  'CERT_UNTRUSTED',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'ERR_TLS_CERT_ALTNAME_INVALID',
]);

/**
 * The clear error for a failed call whose cause is TLS: CA_UNTRUSTED when the manager's
 * certificate did not verify (another CA than the pinned one, a name it does not carry), or a
 * hint when an https:// URL reached a plain-HTTP port. Undefined for any other failure.
 *
 * @example tlsFailure(e, 'https://m:7400')?.code // 'CA_UNTRUSTED'
 */
export function tlsFailure(e: unknown, baseUrl: string): FreeLoaderError | undefined {
  const cause = (e as { cause?: { code?: string; message?: string } })?.cause;
  const code = cause?.code ?? '';
  if (UNTRUSTED_CODES.has(code)) {
    return new FreeLoaderError(
      'CA_UNTRUSTED',
      `the manager at ${baseUrl} presented a certificate this client does not trust (${code}: ` +
        `${cause?.message ?? ''}); if the manager's CA was replaced, enroll again with a new ` +
        'join token (agents) or run `freeloader login` again (CLI)',
      { tlsCode: code },
      e,
    );
  }
  if (code === 'ERR_SSL_WRONG_VERSION_NUMBER' || code === 'EPROTO') {
    return new FreeLoaderError(
      'UNAVAILABLE',
      `the manager at ${baseUrl} does not speak TLS (${code}): it listens on loopback over ` +
        `plain HTTP; use ${baseUrl.replace(/^https:/, 'http:')}`,
      undefined,
      e,
    );
  }
  return undefined;
}

/**
 * The manager's CA certificate, fetched before anything is trusted and accepted only when its
 * SHA-256 fingerprint (computed here, not taken from the answer) is `expected` — the join
 * token's or the one the user confirmed. The fetch itself cannot verify the manager (that is
 * what it is for); an impostor that forwards the real CA still cannot pass the verified
 * connection that follows, which trusts only this CA.
 *
 * @example const caPem = await pinManagerCa('https://m:7400', 'sha256:3f1c…');
 */
export async function pinManagerCa(baseUrl: string, expected: string): Promise<string> {
  const { caPem, fingerprint } = await fetchManagerCa(baseUrl);
  if (fingerprint !== expected.toLowerCase()) {
    throw new FreeLoaderError(
      'CA_MISMATCH',
      `the manager at ${baseUrl} has CA fingerprint ${fingerprint}, but the join token pins ` +
        `${expected.toLowerCase()}: this is not the manager that minted the token (or its CA ` +
        'was replaced); check the URL, or ask its admin for a new token',
      { expected: expected.toLowerCase(), actual: fingerprint },
    );
  }
  return caPem;
}

/** The manager's CA (unverified: the caller checks the fingerprint) and its fingerprint. */
export async function fetchManagerCa(
  baseUrl: string,
): Promise<{ caPem: string; fingerprint: string }> {
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  try {
    const res = await request(`${baseUrl}/api/v1/tls/ca`, {
      dispatcher,
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(CA_FETCH_TIMEOUT_MS),
    });
    const text = await res.body.text();
    if (res.statusCode !== 200) throw FreeLoaderError.fromResponse(res.statusCode, text);
    const view = JSON.parse(text) as Partial<ManagerCaView>;
    if (typeof view.caPem !== 'string') {
      throw new FreeLoaderError('BAD_REQUEST', `${baseUrl} answered no CA certificate`);
    }
    return { caPem: view.caPem, fingerprint: caFingerprint(view.caPem) };
  } catch (e) {
    if (e instanceof FreeLoaderError) throw e;
    throw (
      tlsFailure(e, baseUrl) ??
      new FreeLoaderError(
        'UNAVAILABLE',
        `manager at ${baseUrl} is unreachable (${(e as Error).message})`,
        undefined,
        e,
      )
    );
  } finally {
    await dispatcher.close();
  }
}
