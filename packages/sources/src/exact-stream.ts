import { Readable } from 'node:stream';
import { FreeLoaderError } from '@freeloader/protocol';

/**
 * Pass `body` through, insisting on exactly `expected` bytes: a body that ends short or runs
 * long errors with SOURCE_ERROR instead of silently corrupting a morsel. Errors the body raises
 * go through `mapError` so callers see FreeLoaderErrors. Destroying the result destroys `body`.
 */
export function exactStream(
  body: Readable,
  expected: number,
  what: string,
  mapError: (err: unknown) => unknown,
): Readable {
  async function* pass(): AsyncGenerator<Buffer> {
    let seen = 0;
    try {
      for await (const chunk of body as AsyncIterable<Buffer>) {
        seen += chunk.length;
        if (seen > expected) {
          throw new FreeLoaderError(
            'SOURCE_ERROR',
            `${what}: body longer than the ${expected} bytes asked for`,
          );
        }
        yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
      }
    } catch (err) {
      throw err instanceof FreeLoaderError ? err : mapError(err);
    } finally {
      // Stopped early (consumer destroyed us, or we threw): drop the rest quietly.
      if (!body.readableEnded) {
        body.on('error', () => {});
        body.destroy();
      }
    }
    if (seen < expected) {
      throw new FreeLoaderError(
        'SOURCE_ERROR',
        `${what}: short body, got ${seen} of ${expected} bytes`,
        { got: seen, expected },
      );
    }
  }
  return Readable.from(pass(), { objectMode: false });
}

/**
 * Collect a stream of known length into one buffer: `into` when given (a caller's reusable
 * buffer, at least `length` long: the result is a view of it), else a new one.
 *
 * @example const morsel = await collect(await source.streamRange(0, MiB, info), MiB, slot);
 */
export async function collect(stream: Readable, length: number, into?: Buffer): Promise<Buffer> {
  if (into && into.length < length) {
    stream.destroy();
    throw new RangeError(`collect: a ${into.length}-byte buffer cannot hold ${length} bytes`);
  }
  const out = into ? into.subarray(0, length) : Buffer.allocUnsafe(length);
  let at = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    if (at + chunk.length > length) {
      stream.destroy();
      throw new FreeLoaderError('SOURCE_ERROR', `body longer than the ${length} bytes asked for`);
    }
    chunk.copy(out, at);
    at += chunk.length;
  }
  if (at < length) {
    throw new FreeLoaderError('SOURCE_ERROR', `short body, got ${at} of ${length} bytes`);
  }
  return out;
}
