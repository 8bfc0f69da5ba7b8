import { createHash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  BATCH_FRAME_HEADER,
  BatchFrameDecoder,
  decodeBatchFrames,
  encodeFrameHeader,
  type BatchFrame,
} from './batch-frame.js';

const frame = (index: number, size: number): BatchFrame => {
  const data = randomBytes(size);
  return { index, data, sha256: createHash('sha256').update(data).digest('hex') };
};
const encode = (frames: BatchFrame[]): Buffer =>
  Buffer.concat(
    frames.flatMap((f) => [encodeFrameHeader(f.index, f.data.length, f.sha256), f.data]),
  );

describe('batch frames', () => {
  const frames = [frame(0, 100), frame(3, 0), frame(4, 4096), frame(2 ** 20, 7)];

  it('have a 40-byte header: index, length, sha256', () => {
    const f = frames[2]!;
    const header = encodeFrameHeader(f.index, f.data.length, f.sha256);
    expect(header.length).toBe(BATCH_FRAME_HEADER);
    expect([header.readUInt32BE(0), header.readUInt32BE(4)]).toEqual([4, 4096]);
    expect(header.toString('hex', 8)).toBe(f.sha256);
  });

  it('decode to what was encoded', () => {
    expect(decodeBatchFrames(encode(frames))).toEqual(frames);
    expect(decodeBatchFrames(Buffer.alloc(0))).toEqual([]);
  });

  it.each([1, 3, 39, 40, 41, 1000])('decode the same when cut into %i-byte chunks', (size) => {
    const body = encode(frames);
    const decoder = new BatchFrameDecoder();
    const got: BatchFrame[] = [];
    for (let off = 0; off < body.length; off += size) {
      got.push(...decoder.feed(body.subarray(off, off + size)));
    }
    expect(got).toEqual(frames);
    expect(decoder.done).toBe(true);
  });

  it('refuse a body that ends inside a frame', () => {
    const body = encode(frames);
    expect(() => decodeBatchFrames(body.subarray(0, body.length - 1))).toThrow();
    expect(() => decodeBatchFrames(body.subarray(0, 10))).toThrow();
  });
});
