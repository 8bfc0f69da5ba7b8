/**
 * One table of error codes, each mapped to one HTTP status, and one coded error class.
 * Every process throws {@link FreeLoaderError}; every HTTP edge turns it into {@link ErrorBody}
 * and back, so a code survives any number of hops.
 *
 * @example
 *   throw new FreeLoaderError('NO_SPACE', 'cache cannot hold 2 GiB (1.2 GiB free)');
 *   // → HTTP 507 {"error":{"code":"NO_SPACE","message":"cache cannot hold 2 GiB (1.2 GiB free)"}}
 */
export const ERROR_STATUS = {
  BAD_REQUEST: 400,
  VALIDATION_FAILED: 400,
  BAD_URI: 400,
  UNSUPPORTED_SCHEME: 400,
  QUOTA_EXCEEDS_DISK: 400,
  UNAUTHENTICATED: 401,
  BAD_CREDENTIALS: 401,
  JOIN_TOKEN_INVALID: 401,
  JOIN_TOKEN_EXPIRED: 401,
  JOIN_TOKEN_USED: 401,
  /** A plain-HTTP request reached the manager's HTTPS port. */
  TLS_REQUIRED: 400,
  /** The manager's CA is not the one the join token (or the pinned session) names. */
  CA_MISMATCH: 502,
  /** The manager presented a certificate this client has no reason to trust. */
  CA_UNTRUSTED: 502,
  FORBIDDEN: 403,
  AGENT_REVOKED: 403,
  CSRF_REJECTED: 403,
  /** A source address (loopback, private, metadata …) the admin's source allow list does not name. */
  SOURCE_FORBIDDEN: 403,
  CAPABILITY_MISSING: 401,
  CAPABILITY_INVALID: 403,
  CAPABILITY_EXPIRED: 403,
  NOT_FOUND: 404,
  AGENT_NOT_FOUND: 404,
  DATASET_NOT_FOUND: 404,
  FOLDER_NOT_FOUND: 404,
  MORSEL_NOT_FOUND: 404,
  RESERVATION_NOT_FOUND: 404,
  JOB_NOT_FOUND: 404,
  PATCH_SESSION_NOT_FOUND: 404,
  CONFLICT: 409,
  ALREADY_EXISTS: 409,
  DATASET_NOT_READY: 409,
  RESERVATION_EXPIRED: 410,
  /** A patched morsel was already served and dropped from the patching node's memory. */
  MORSEL_GONE: 410,
  PAYLOAD_TOO_LARGE: 413,
  HASH_MISMATCH: 422,
  SOURCE_CHANGED: 409,
  RANGE_NOT_SUPPORTED: 422,
  RATE_LIMITED: 429,
  INTERNAL: 500,
  /**
   * The manager's master key file does not open this database's dataset keys (another
   * manager's file is needed), or is missing or unsafe: the manager refuses to start.
   */
  MASTER_KEY_MISMATCH: 500,
  SOURCE_UNREACHABLE: 502,
  SOURCE_ERROR: 502,
  UNAVAILABLE: 503,
  NO_DONORS: 503,
  TIMEOUT: 504,
  NO_SPACE: 507,
  /** The donor's disk itself is full (ENOSPC), whatever its quota says: place elsewhere. */
  DISK_FULL: 507,
} as const;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** The default code for a bare HTTP status (when a peer answered without an error body). */
const STATUS_DEFAULT_CODE: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  409: 'CONFLICT',
  410: 'RESERVATION_EXPIRED',
  413: 'PAYLOAD_TOO_LARGE',
  422: 'HASH_MISMATCH',
  429: 'RATE_LIMITED',
  500: 'INTERNAL',
  502: 'SOURCE_ERROR',
  503: 'UNAVAILABLE',
  504: 'TIMEOUT',
  507: 'NO_SPACE',
};

export function isErrorCode(value: unknown): value is ErrorCode {
  return typeof value === 'string' && Object.hasOwn(ERROR_STATUS, value);
}

/** HTTP status for a code. */
export function statusOf(code: ErrorCode): number {
  return ERROR_STATUS[code];
}

/** Best code for a status: the table's default, else by class (4xx → BAD_REQUEST, 5xx → INTERNAL). */
export function codeOfStatus(status: number): ErrorCode {
  return STATUS_DEFAULT_CODE[status] ?? (status >= 500 ? 'INTERNAL' : 'BAD_REQUEST');
}

/** The JSON body every FreeLoader HTTP endpoint returns on error. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; details?: Record<string, unknown> };
}

export class FreeLoaderError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Record<string, unknown> | undefined;

  constructor(
    code: ErrorCode,
    message: string,
    details?: Record<string, unknown>,
    cause?: unknown,
  ) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'FreeLoaderError';
    this.code = code;
    this.status = statusOf(code);
    this.details = details;
  }

  toBody(): ErrorBody {
    return {
      error: {
        code: this.code,
        message: this.message,
        ...(this.details ? { details: this.details } : {}),
      },
    };
  }

  /**
   * Rebuild an error from a peer's response: its body when it is ours, else from the status.
   * `body` may be the parsed JSON or the raw response text (parsed here when it is JSON).
   */
  static fromResponse(status: number, body: unknown): FreeLoaderError {
    if (typeof body === 'string') {
      try {
        body = JSON.parse(body);
      } catch {
        // not JSON: the text goes into the message below
      }
    }
    const err = (body as Partial<ErrorBody> | null | undefined)?.error;
    if (err && isErrorCode(err.code) && typeof err.message === 'string') {
      return new FreeLoaderError(err.code, err.message, err.details);
    }
    const text = typeof body === 'string' && body.length > 0 ? `: ${body.slice(0, 200)}` : '';
    return new FreeLoaderError(codeOfStatus(status), `HTTP ${status}${text}`);
  }
}

export function isFreeLoaderError(e: unknown): e is FreeLoaderError {
  return e instanceof FreeLoaderError;
}
