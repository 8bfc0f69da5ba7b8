import { isFreeLoaderError } from '@freeloader/protocol';

/**
 * Socket errors that say no agent answers at a donor's address at all: the port is closed
 * (ECONNREFUSED: the agent was killed or exited), or the host cannot be reached (EHOSTUNREACH,
 * ENETUNREACH: it is off the network). Neither clears within a read, so asking again only costs
 * a connection attempt per morsel dealt to it: in the degraded-read benchmark (W=8, n=2) a
 * killed donor was refused 12 times in one read while its twins served its morsels.
 */
export const UNREACHABLE_ERRNOS: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);

/**
 * What a failed morsel request's error says about its donor's connection, as the read path
 * records it (`details` of an UNAVAILABLE error: the socket's errno and the bytes the socket
 * had received when it failed).
 */
interface SocketFailure {
  errno?: unknown;
  bytesRead?: unknown;
}

/**
 * Whether a failed request says its donor cannot be reached at all, so the read leaves it out
 * for the rest of the read at once instead of asking it again a few seconds later: the
 * connection was refused or had no route (UNREACHABLE_ERRNOS), or it was reset before the donor
 * sent a single byte on it (an agent that accepts and dies, or a firewall's reset). A reset after
 * bytes arrived is not: a keep-alive connection the donor closed as a request went out is reset
 * the same way, and that donor is alive. Stalls and timeouts are not either (a frozen donor may
 * thaw; the stall watch handles them).
 *
 * @example
 *   isUnreachable(new FreeLoaderError('UNAVAILABLE', 'x', { errno: 'ECONNREFUSED' })) // true
 *   isUnreachable(new FreeLoaderError('UNAVAILABLE', 'x', { errno: 'ECONNRESET', bytesRead: 0 })) // true
 *   isUnreachable(new FreeLoaderError('UNAVAILABLE', 'x', { errno: 'ECONNRESET', bytesRead: 512 })) // false
 *   isUnreachable(new FreeLoaderError('TIMEOUT', 'donor stalled')) // false
 */
export function isUnreachable(error: unknown): boolean {
  if (!isFreeLoaderError(error) || error.code !== 'UNAVAILABLE') return false;
  const { errno, bytesRead } = (error.details ?? {}) as SocketFailure;
  if (typeof errno !== 'string') return false;
  if (UNREACHABLE_ERRNOS.has(errno)) return true;
  return errno === 'ECONNRESET' && bytesRead === 0;
}
