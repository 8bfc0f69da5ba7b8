/** Seconds a client is told to wait (Retry-After) while the database is unreachable. */
export const DATABASE_RETRY_AFTER_S = 5;

/** Socket errors of a connection that could not be made or was cut. */
const NETWORK_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EAI_AGAIN',
]);

/**
 * SQLSTATEs of a server going away or not yet there: admin/crash shutdown (57P01, 57P02),
 * starting up or recovering (57P03), too many connections (53300).
 */
const SERVER_GONE_STATES = new Set(['57P01', '57P02', '57P03', '53300']);

/** node-postgres's own messages for a connection that died or never came. */
const POOL_MESSAGES =
  /Connection terminated|connection timeout|Client has encountered a connection error|Client was closed|terminating connection/i;

/**
 * Whether `err` (from node-postgres) means the database cannot be reached right now — a
 * condition to answer 503 with Retry-After, not a bug to answer 500 for. Class 08 SQLSTATEs are
 * connection exceptions.
 *
 * @example
 *   isDatabaseUnavailable(Object.assign(new Error('x'), { code: 'ECONNREFUSED' })) // true
 *   isDatabaseUnavailable(Object.assign(new Error('x'), { code: '23505' }))        // false
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e && depth < 4; depth++) {
    const { code, message, errors } = e as { code?: unknown; message?: unknown; errors?: unknown };
    if (typeof code === 'string') {
      if (NETWORK_CODES.has(code) || SERVER_GONE_STATES.has(code) || /^08...$/.test(code)) {
        return true;
      }
    }
    if (typeof message === 'string' && POOL_MESSAGES.test(message)) return true;
    // A connection to "localhost" tried on ::1 and 127.0.0.1 fails with an AggregateError.
    if (Array.isArray(errors) && errors.some(isDatabaseUnavailable)) return true;
    e = (e as { cause?: unknown }).cause;
  }
  return false;
}
