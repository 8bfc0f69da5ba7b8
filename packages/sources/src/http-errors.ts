import { FreeLoaderError } from '@freeloader/protocol';

const PHASE_TIMEOUTS = {
  connect: 'timed out connecting',
  headers: 'timed out waiting for response headers',
  body: 'timed out waiting for body data',
} as const;

const TIMEOUTS: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: PHASE_TIMEOUTS.connect,
  UND_ERR_HEADERS_TIMEOUT: PHASE_TIMEOUTS.headers,
  UND_ERR_BODY_TIMEOUT: PHASE_TIMEOUTS.body,
  ETIMEDOUT: PHASE_TIMEOUTS.connect,
};

/** The TIMEOUT error for a request that outwaited one of its phases. */
export function timeoutError(phase: keyof typeof PHASE_TIMEOUTS, where: string): FreeLoaderError {
  return new FreeLoaderError('TIMEOUT', `${where}: ${PHASE_TIMEOUTS[phase]}`, { phase });
}

const UNREACHABLE = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EAI_NONAME',
  'EHOSTUNREACH',
  'EHOSTDOWN',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
]);

/** OpenSSL verification failures Node reports by code (others start with ERR_TLS_/ERR_SSL_). */
const TLS_CODES = new Set([
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_UNTRUSTED',
  'CERT_REVOKED',
  'CERT_SIGNATURE_FAILURE',
  'HOSTNAME_MISMATCH',
]);

/**
 * What OpenSSL reports when the bytes after our ClientHello are not a TLS record: the server
 * answered in another protocol, almost always plain HTTP on an `https://` URI.
 */
const NOT_TLS = new Set(['ERR_SSL_WRONG_VERSION_NUMBER', 'ERR_SSL_PACKET_LENGTH_TOO_LONG']);

/**
 * The reason in an OpenSSL error line, without the thread id, library, function and source file
 * that Node puts around it (and the trailing newline that split CLI errors over two lines).
 *
 * @example
 *   opensslReason('803C…:error:0A000086:SSL routines:tls_post_process_server_certificate:certificate verify failed:../ssl/statem/statem_clnt.c:1889:\n')
 *   // 'certificate verify failed'
 */
export function opensslReason(message: string): string {
  const m = /^[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/.exec(message);
  return (m ? m[1]! : message).replace(/\s+/g, ' ').trim();
}

/** The first error in a cause/aggregate chain carrying a `code`. */
function coded(err: unknown, depth = 0): (Error & { code: string }) | null {
  if (!(err instanceof Error) || depth > 5) return null;
  const code = (err as { code?: unknown }).code;
  if (typeof code === 'string' && code !== 'UND_ERR_SOCKET' && code !== 'ERR_ASSERTION') {
    return err as Error & { code: string };
  }
  const inner: unknown = err instanceof AggregateError ? (err.errors as unknown[])[0] : err.cause;
  return (
    coded(inner, depth + 1) ?? (typeof code === 'string' ? (err as Error & { code: string }) : null)
  );
}

/** The FreeLoaderError with `code` in a cause/aggregate chain, if any. */
function causeOfCode(err: unknown, code: string, depth = 0): FreeLoaderError | null {
  if (err instanceof FreeLoaderError && err.code === code) return err;
  if (!(err instanceof Error) || depth > 5) return null;
  const inner: unknown = err instanceof AggregateError ? (err.errors as unknown[])[0] : err.cause;
  return causeOfCode(inner, code, depth + 1);
}

/**
 * Translate a transport error (undici or Node) into a FreeLoaderError naming `where`, which must
 * already be redacted. Aborts pass through untouched so callers see their own reason.
 */
export function mapTransportError(err: unknown, where: string, signal?: AbortSignal): unknown {
  if (err instanceof FreeLoaderError) return err;
  if (signal?.aborted) return signal.reason;
  // A refusal from the source policy's DNS hook, wrapped by the socket or undici on the way.
  const refused = causeOfCode(err, 'SOURCE_FORBIDDEN');
  if (refused) return refused;
  const e = coded(err);
  const code = e?.code ?? '';
  const message = e?.message ?? String(err);
  const timeout = TIMEOUTS[code];
  if (timeout) return new FreeLoaderError('TIMEOUT', `${where}: ${timeout}`, { code }, err);
  if (UNREACHABLE.has(code)) {
    return new FreeLoaderError(
      'SOURCE_UNREACHABLE',
      `${where}: unreachable (${code})`,
      { code },
      err,
    );
  }
  if (NOT_TLS.has(code)) {
    return new FreeLoaderError(
      'SOURCE_ERROR',
      `${where}: the server did not answer TLS (is it plain http://?) (${code})`,
      { code },
      err,
    );
  }
  if (TLS_CODES.has(code) || code.startsWith('ERR_TLS_') || code.startsWith('ERR_SSL_')) {
    return new FreeLoaderError(
      'SOURCE_ERROR',
      `${where}: TLS: ${opensslReason(message)} (${code})`,
      { code },
      err,
    );
  }
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') {
    return new FreeLoaderError('SOURCE_ERROR', `${where}: short body (${message})`, { code }, err);
  }
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'UND_ERR_SOCKET') {
    return new FreeLoaderError(
      'SOURCE_ERROR',
      `${where}: connection lost (${code})`,
      { code },
      err,
    );
  }
  return new FreeLoaderError(
    'SOURCE_ERROR',
    `${where}: ${message}`,
    code ? { code } : undefined,
    err,
  );
}

/**
 * The error for an HTTP status a read cannot use. 404/410 and 401/403 get plain words because
 * users act on them (fix the path, fix the credentials); 429 and 5xx are marked retryable.
 */
export function statusError(status: number, where: string): FreeLoaderError {
  const retryable = status === 429 || status >= 500;
  const what =
    status === 404 || status === 410
      ? `not found (${status})`
      : status === 401 || status === 403
        ? `access denied (${status})`
        : status === 412
          ? `source changed during import (precondition failed, 412)`
          : `HTTP ${status}`;
  const code = status === 412 ? 'SOURCE_CHANGED' : 'SOURCE_ERROR';
  return new FreeLoaderError(code, `${where}: ${what}`, { status, retryable });
}
