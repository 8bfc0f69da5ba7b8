import type { Socket } from 'node:net';
import { constants } from 'node:os';
import { nativeAddon } from './addon.js';
import { descriptorOf } from './socket-descriptor.js';

/**
 * How long one wait for a full socket to take more lasts before the sender looks again whether
 * JavaScript has destroyed the socket (idle timeout, shutdown): the wait holds its own descriptor
 * of the socket, so a destroyed socket stays open to the peer until the wait ends.
 */
export const WRITABLE_RECHECK_MS = 1000;

/** A morsel's bytes in a file: what {@link sendFileSpan} sends. */
export interface FileSpan {
  fd: number;
  /** Byte offset in the file. */
  position: number;
  length: number;
}

/** Whether this process can send a file span straight to a socket (Linux, with the addon). */
export function sendFileSupported(): boolean {
  return process.platform === 'linux' && nativeAddon()?.sendFile !== undefined;
}

/**
 * Send `head` then the file span to `socket` without the bytes passing through JavaScript:
 * `send` for the head, `sendfile(2)` for the body, in a thread-pool thread (so a cold page cache
 * stalls that thread, not the event loop), waiting on the event loop while the socket's buffer
 * is full. Resolves once all of it is in the kernel's hands; rejects when the socket breaks or is
 * destroyed, or the file ends early. The socket must have nothing else queued, and nothing else
 * may write to it until this settles.
 *
 * Why: a donor answered a morsel with a pread into a pooled buffer (one copy, on a pool thread)
 * and a writev (a second copy), 1.2 CPU-s per GiB served on loopback on the Intel VM of
 * 28 Nov 2026, 0.43 of it those two copies (perf, docs/performance.md "Ninth session").
 *
 * @example await sendFileSpan(socket, morselResponseHead(n, sha, date), { fd, position, length: n })
 */
export async function sendFileSpan(socket: Socket, head: Buffer, span: FileSpan): Promise<void> {
  const addon = nativeAddon();
  const { sendFile, waitWritable } = addon ?? {};
  if (!sendFile || !waitWritable) throw new Error('sendfile is not available');
  const total = head.length + span.length;
  let sent = 0;
  let pollError = 0;
  for (;;) {
    const fd = liveDescriptor(socket);
    const before = sent;
    sent = await new Promise<number>((resolve, reject) => {
      sendFile(fd, head, span.fd, span.position, span.length, sent, (errno, done) => {
        if (errno !== 0) reject(sendError(errno));
        else resolve(done);
      });
    });
    if (sent >= total) return;
    // libuv reports a socket in error (POLLERR) as EBADF: the send after it says which error;
    // one that then makes no progress either ends here rather than spinning.
    if (pollError !== 0 && sent === before) throw sendError(pollError);
    // The socket's buffer is full: wait until it drains (or look again after a while).
    for (;;) {
      const status = await new Promise<number>((resolve) =>
        waitWritable(liveDescriptor(socket), WRITABLE_RECHECK_MS, resolve),
      );
      pollError = status < 0 ? -status : 0;
      if (status !== 1) break;
    }
  }
}

/** The socket's descriptor, read on this thread just before use; throws once it is destroyed. */
function liveDescriptor(socket: Socket): number {
  const fd = socket.destroyed ? undefined : descriptorOf(socket);
  if (fd === undefined)
    throw Object.assign(new Error('socket closed'), { code: 'ERR_SOCKET_CLOSED' });
  return fd;
}

function sendError(errno: number): Error {
  const name =
    Object.entries(constants.errno).find(([, n]) => n === errno)?.[0] ?? `errno ${errno}`;
  return Object.assign(new Error(`sendfile: ${name}`), { code: name });
}
