import { FreeLoaderError, MAX_URI_LENGTH } from '@freeloader/protocol';

/** Schemes FreeLoader reads out of the box (file only when allowed). */
export const BUILTIN_SCHEMES = ['http', 'https', 'file'] as const;

/**
 * The environment variable an admin sets to `true` on the manager and on each agent to allow
 * `file://` sources (off by default: a file URI reads the files of the machine that imports it).
 */
export const ALLOW_FILE_URIS_ENV = 'FREELOADER_ALLOW_FILE_URIS';

/**
 * Whether the environment allows `file://` sources: {@link ALLOW_FILE_URIS_ENV} set to 1, true,
 * yes or on (any case). The agent reads it; the manager's config parses the same variable.
 *
 * @example fileUrisAllowed({ FREELOADER_ALLOW_FILE_URIS: 'true' }) === true
 */
export function fileUrisAllowed(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = (env[ALLOW_FILE_URIS_ENV] ?? '').trim().toLowerCase();
  return ['1', 'true', 'yes', 'on'].includes(value);
}

export interface ParseSourceUriOptions {
  /** Accept file:// URIs (default false). */
  allowFile?: boolean;
  /** Schemes to accept, without the colon (default {@link BUILTIN_SCHEMES}). */
  schemes?: readonly string[];
}

/** Query parameters whose values are secrets (pre-signed URLs, tokens). */
const SECRET_PARAM = /sig|signature|token|secret|password|passwd|credential|key|auth/i;

/**
 * Parse and vet a source URI. Errors never echo credentials.
 *
 * @throws FreeLoaderError BAD_URI (unparseable, too long, no host, remote file host),
 *   UNSUPPORTED_SCHEME (message lists the supported ones; file:// refused unless allowed).
 * @example
 *   parseSourceUri('https://data.example.org/run42.h5').hostname === 'data.example.org'
 *   parseSourceUri('file:///data/x.h5') // throws UNSUPPORTED_SCHEME unless { allowFile: true }
 */
export function parseSourceUri(text: string, options: ParseSourceUriOptions = {}): URL {
  const allowFile = options.allowFile ?? false;
  const schemes = (options.schemes ?? BUILTIN_SCHEMES).filter((s) => allowFile || s !== 'file');
  if (text.length === 0) throw new FreeLoaderError('BAD_URI', 'source URI is empty');
  if (text.length > MAX_URI_LENGTH) {
    throw new FreeLoaderError('BAD_URI', `source URI longer than ${MAX_URI_LENGTH} characters`);
  }
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new FreeLoaderError('BAD_URI', `not a valid URI: ${redactUri(text)}`);
  }
  const scheme = url.protocol.slice(0, -1);
  if (scheme === 'file' && !allowFile && (options.schemes ?? BUILTIN_SCHEMES).includes('file')) {
    throw new FreeLoaderError(
      'UNSUPPORTED_SCHEME',
      `file:// sources are off; an admin allows them by starting the manager and its agents ` +
        `with ${ALLOW_FILE_URIS_ENV}=true (supported now: ${schemes.join(', ')})`,
      { scheme, supported: schemes, allowWith: `${ALLOW_FILE_URIS_ENV}=true` },
    );
  }
  if (!schemes.includes(scheme)) {
    throw new FreeLoaderError(
      'UNSUPPORTED_SCHEME',
      `unsupported scheme "${scheme}"; supported: ${schemes.join(', ')}`,
      { scheme, supported: schemes },
    );
  }
  if (scheme === 'file') {
    if (url.hostname !== '' && url.hostname !== 'localhost') {
      throw new FreeLoaderError('BAD_URI', `file URI names a remote host: ${redactUri(url)}`);
    }
  } else if (url.hostname === '') {
    throw new FreeLoaderError('BAD_URI', `URI has no host: ${redactUri(url)}`);
  }
  return url;
}

/**
 * A URI safe for logs and error messages: the password and secret-looking query values
 * (signatures, tokens, keys) become `***`. Unparseable text is redacted by pattern.
 *
 * @example
 *   redactUri('https://bob:hunter2@h/x?X-Amz-Signature=abc&part=1')
 *   // → 'https://bob:***@h/x?X-Amz-Signature=***&part=1'
 */
export function redactUri(uri: string | URL): string {
  let url: URL;
  try {
    url = typeof uri === 'string' ? new URL(uri) : new URL(uri.href);
  } catch {
    return String(uri)
      .replace(/\/\/([^/@:]*):[^/@]*@/, '//$1:***@')
      .replace(new RegExp(`([?&][^=&]*(?:${SECRET_PARAM.source})[^=&]*=)[^&#]*`, 'gi'), '$1***');
  }
  if (url.password !== '') url.password = '***';
  const secret = [...url.searchParams.keys()].filter((k) => SECRET_PARAM.test(k));
  for (const key of new Set(secret)) url.searchParams.set(key, '***');
  // URLSearchParams percent-encodes the asterisks; keep them readable.
  return url.href.replace(/%2A%2A%2A/g, '***');
}
