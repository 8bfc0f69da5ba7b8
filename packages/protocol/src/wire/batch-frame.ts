/**
 * The batch-frame codec of `GET /v1/morsels/:dataset?from=&count=`: the donor encodes, a reader
 * decodes, both here. Each frame is
 *
 *   [u32 BE index][u32 BE length][32-byte sha256][length bytes]
 *
 * one per morsel the donor holds in the range, in index order (held-nowhere indices are simply
 * absent, so a reader goes by the frames' indices, not by a count).
 */

/** Size of the header before each morsel in a batch response (bytes). */
export const BATCH_FRAME_HEADER = 4 + 4 + 32;

/** One morsel of a batch. */
export interface BatchFrame {
  index: number;
  data: Buffer;
  /** Hex. */
  sha256: string;
}

/** The 40-byte header of one frame (the donor pushes it, then the morsel's bytes, uncopied). */
export function encodeFrameHeader(index: number, length: number, sha256: string): Buffer {
  const header = Buffer.allocUnsafe(BATCH_FRAME_HEADER);
  header.writeUInt32BE(index, 0);
  header.writeUInt32BE(length, 4);
  header.write(sha256, 8, 32, 'hex');
  return header;
}

/**
 * Splits a batch stream into frames, whatever the chunking: feed each chunk as it arrives, take
 * the frames completed so far. `done` says whether the stream ended on a frame boundary.
 *
 * @example
 *   const d = new BatchFrameDecoder();
 *   for await (const chunk of body) for (const f of d.feed(chunk)) use(f.index, f.data);
 *   if (!d.done) throw new Error('batch cut short');
 */
export class BatchFrameDecoder {
  private pending: Buffer = Buffer.alloc(0);

  /** The frames `chunk` completes (their data are copies, safe to keep). */
  feed(chunk: Buffer): BatchFrame[] {
    this.pending = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const frames: BatchFrame[] = [];
    let off = 0;
    while (this.pending.length - off >= BATCH_FRAME_HEADER) {
      const length = this.pending.readUInt32BE(off + 4);
      const end = off + BATCH_FRAME_HEADER + length;
      if (this.pending.length < end) break;
      frames.push({
        index: this.pending.readUInt32BE(off),
        sha256: this.pending.toString('hex', off + 8, off + BATCH_FRAME_HEADER),
        data: Buffer.from(this.pending.subarray(off + BATCH_FRAME_HEADER, end)),
      });
      off = end;
    }
    this.pending = Buffer.from(this.pending.subarray(off));
    return frames;
  }

  /** No partial frame is held (the stream may end here). */
  get done(): boolean {
    return this.pending.length === 0;
  }
}

/** Every frame of a complete batch body; throws if it ends inside a frame. */
export function decodeBatchFrames(body: Buffer): BatchFrame[] {
  const decoder = new BatchFrameDecoder();
  const frames = decoder.feed(body);
  if (!decoder.done) throw new Error('batch body ends inside a frame');
  return frames;
}
