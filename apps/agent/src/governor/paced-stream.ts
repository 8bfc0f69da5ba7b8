import { Transform, pipeline, type Readable, type TransformCallback } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TokenBucket } from './token-bucket.js';

/** Bytes paced at a time: small enough that a rate drop bites within one slice at any cap. */
export const PACE_SLICE_BYTES = 64 * 1024;

export interface PaceOptions {
  /** Checked before every slice: return an Error to abort the response (e.g. the owner paused). */
  refuse?: () => Error | undefined;
}

/**
 * A Transform that lets bytes through at the bucket's rate: each slice reserves tokens and, when
 * the bucket is in debt, waits on a timer before being pushed. Nothing blocks the event loop,
 * and a slow consumer still applies backpressure through the stream machinery.
 */
export class PacedStream extends Transform {
  constructor(
    private readonly bucket: TokenBucket,
    private readonly opts: PaceOptions = {},
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.pace(chunk).then(
      () => done(),
      (e: unknown) => done(e as Error),
    );
  }

  private async pace(chunk: Buffer): Promise<void> {
    for (let at = 0; at < chunk.length && !this.destroyed; at += PACE_SLICE_BYTES) {
      const refused = this.opts.refuse?.();
      if (refused) throw refused;
      const slice = chunk.subarray(at, Math.min(chunk.length, at + PACE_SLICE_BYTES));
      const waitMs = this.bucket.reserve(slice.length);
      if (waitMs >= 1) await sleep(waitMs);
      if (!this.destroyed) this.push(slice);
    }
  }
}

/**
 * Pace a whole response body: a buffer becomes a paced stream of its bytes; a stream is piped
 * through one (errors on either side destroy both, so Fastify sees the failure).
 *
 * @example reply.header('content-length', data.length).send(paceBody(data, bucket));
 */
export function paceBody(
  body: Buffer | Readable,
  bucket: TokenBucket,
  opts: PaceOptions = {},
): Readable {
  const paced = new PacedStream(bucket, opts);
  if (Buffer.isBuffer(body)) {
    paced.end(body);
    return paced;
  }
  pipeline(body, paced, () => undefined);
  return paced;
}
