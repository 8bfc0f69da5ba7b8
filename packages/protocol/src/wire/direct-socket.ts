import { connect, type LookupFunction, type Socket } from 'node:net';

export interface DirectSocketOptions {
  host: string;
  port: number;
  /** Size of the reused buffer for heads and anything not read straight into a body (bytes). */
  bufferBytes: number;
  /**
   * Asked before every read: where a body's next bytes should land (the rest of the caller's
   * slot), or null to read into the reused buffer.
   */
  bodyTarget: () => Uint8Array | null;
  /** `n` bytes landed in the target `bodyTarget` gave. Return false to stop reading. */
  onBody: (n: number) => boolean;
  /** Bytes read into the reused buffer: consume (or copy) them before returning. */
  onBytes: (chunk: Buffer) => boolean;
  /** Whether this socket is still its owner's current one; a replaced socket's reads are dropped. */
  isCurrent: (socket: Socket) => boolean;
  /** DNS resolution for the connection (a policy that vets the address); default Node's. */
  lookup?: LookupFunction;
}

/**
 * A TCP connection whose reads allocate nothing: a body's bytes go straight into the caller's
 * buffer (no copy), everything else through one reused buffer. Both lean HTTP clients (donor
 * morsels, source ranges) read this way; socket chunks from a plain socket were tens of MB of
 * garbage per GiB.
 *
 * @example
 *   const s = connectDirect({ host, port, bufferBytes: 65536, bodyTarget: () => slotRest(),
 *     onBody: (n) => advance(n), onBytes: (b) => parse(b), isCurrent: (x) => x === current });
 */
export function connectDirect(opts: DirectSocketOptions): Socket {
  const reused = Buffer.allocUnsafe(opts.bufferBytes);
  let target: Uint8Array | null = null;
  const socket: Socket = connect({
    host: opts.host,
    port: opts.port,
    noDelay: true,
    ...(opts.lookup ? { lookup: opts.lookup } : {}),
    onread: {
      buffer: () => (target = opts.bodyTarget()) ?? reused,
      callback: (n: number, buf: Uint8Array) => {
        if (!opts.isCurrent(socket)) return false;
        if (target !== null && buf.buffer === target.buffer) return opts.onBody(n);
        return opts.onBytes(Buffer.from(buf.buffer, buf.byteOffset, n));
      },
    },
  });
  return socket;
}
