import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { paceBody } from './paced-stream.js';
import { MIN_BURST_BYTES, TokenBucket } from './token-bucket.js';

describe('TokenBucket', () => {
  it.each([
    // [rate, reservations (bytes), expected waits (ms)] at a frozen clock
    ['1 MiB/s, within the burst', MiB, [MIN_BURST_BYTES], [0]],
    ['1 MiB/s, debt queues', MiB, [MIN_BURST_BYTES, MiB / 2, MiB / 2], [0, 500, 1000]],
    ['unlimited', 0, [10 * MiB, 10 * MiB], [0, 0]],
  ])('%s', (_name, rate, takes, waits) => {
    const b = new TokenBucket(rate, () => 0);
    expect(takes.map((n) => b.reserve(n))).toEqual(waits);
  });

  it('refills with time, never beyond one burst', () => {
    let now = 0;
    const b = new TokenBucket(MiB, () => now);
    expect(b.reserve(MIN_BURST_BYTES)).toBe(0);
    now = 10_000; // ten idle seconds bank only one burst
    expect(b.reserve(MIN_BURST_BYTES)).toBe(0);
    expect(b.reserve(MiB)).toBe(1000);
  });

  it('a rate drop repays existing debt at the new rate', () => {
    const b = new TokenBucket(10 * MiB, () => 0);
    // 10 MiB/s banks a 512 KiB burst: take it plus 1 MiB of debt (100 ms at the old rate).
    expect(b.reserve(MiB / 2 + MiB)).toBe(100);
    b.setRate(MiB);
    expect(b.reserve(0)).toBe(1000);
  });
});

describe('paceBody', () => {
  it('delivers every byte, in order, at about the bucket rate', async () => {
    const data = Buffer.from(Array.from({ length: 3 * MIN_BURST_BYTES + 7 }, (_, i) => i % 251));
    const bucket = new TokenBucket(1 * MiB, () => performance.now());
    const started = performance.now();
    const out = await buffer(paceBody(data, bucket));
    const seconds = (performance.now() - started) / 1000;
    expect(out.equals(data)).toBe(true);
    // One burst goes at once; the remaining ~128 KiB take ~125 ms at 1 MiB/s. Pacing can only
    // make it later, never sooner; the upper bound only says it is not stuck (a busy machine
    // adds whole seconds of timer lateness).
    expect(seconds).toBeGreaterThan(0.1);
    expect(seconds).toBeLessThan(10);
  });

  it('paces a stream and aborts when refused mid-way', async () => {
    const chunks = Array.from({ length: 8 }, () => Buffer.alloc(MIN_BURST_BYTES, 1));
    let sent = 0;
    const bucket = new TokenBucket(4 * MiB, () => performance.now());
    const paced = paceBody(Readable.from(chunks), bucket, {
      refuse: () => (sent >= 3 ? new Error('paused') : undefined),
    });
    paced.on('data', () => sent++);
    await expect(buffer(paced)).rejects.toThrow('paused');
    expect(sent).toBe(3);
  });
});
