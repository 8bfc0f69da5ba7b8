import type { Socket } from 'node:net';

/**
 * A connected TCP socket's file descriptor on Linux (Node has no public accessor for it; the
 * handle's `fd` has been there since Node 0.x). Read it on the JavaScript thread right before
 * use: once the socket is destroyed the number may belong to another file.
 */
export function descriptorOf(socket: Socket): number | undefined {
  if (process.platform !== 'linux') return undefined;
  const fd = (socket as unknown as { _handle?: { fd?: number } })._handle?.fd;
  return typeof fd === 'number' && fd >= 0 ? fd : undefined;
}
