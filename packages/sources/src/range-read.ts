import { FreeLoaderError } from '@freeloader/protocol';
import { mapTransportError, timeoutError } from './http-errors.js';
import type { Headers } from './http-request.js';
import { RangeConnectionError, type RangeResponse } from './range-connection.js';
import type { RangePool } from './range-pool.js';

/** The answer could not be read by the lean client: read it again another way. */
export const UNSUITABLE = Symbol('unsuitable');

/**
 * One ranged GET through `pool` with its 200/206 body landing in `into`. A request that fails
 * before any answer on a reused keep-alive connection (the server closed it while idle) is sent
 * once more on a fresh one. Failures become FreeLoaderErrors naming `where`; an abort rejects
 * with the signal's reason. Resolves UNSUITABLE for answers this client leaves to a full one.
 *
 * @example
 *   const r = await rangeRead(pool, '/d.bin', 'example.org', { range: 'bytes=0-9' }, buf, where);
 *   if (r !== UNSUITABLE && r.status === 206) use(buf.subarray(0, r.bodyLength));
 */
export async function rangeRead(
  pool: RangePool,
  path: string,
  host: string,
  headers: Headers,
  into: Buffer,
  where: string,
  signal?: AbortSignal,
): Promise<RangeResponse | typeof UNSUITABLE> {
  signal?.throwIfAborted();
  let head = `GET ${path} HTTP/1.1\r\nHost: ${host}\r\naccept-encoding: identity\r\n`;
  for (const [name, value] of Object.entries(headers)) head += `${name}: ${value}\r\n`;
  head += '\r\n';
  let conn = await pool.acquire(signal);
  const onAbort = () => conn.destroy();
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (let attempt = 0; ; attempt++) {
      const reused = conn.reused;
      try {
        return await conn.get(head, into);
      } catch (err) {
        if (signal?.aborted) throw signal.reason;
        if (!(err instanceof RangeConnectionError)) throw err;
        const f = err.failure;
        if (f.kind === 'transport' && !f.responded && reused && attempt === 0) {
          conn = pool.replace(conn);
          continue;
        }
        if (f.kind === 'unsuitable') return UNSUITABLE;
        if (f.kind === 'timeout') throw timeoutError(f.phase, where);
        if (f.kind === 'short') {
          throw new FreeLoaderError(
            'SOURCE_ERROR',
            `${where}: short body, got ${f.got} of ${f.expected} bytes`,
            { got: f.got, expected: f.expected },
          );
        }
        throw mapTransportError(f.error, where, signal);
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort);
    pool.release(conn);
  }
}
