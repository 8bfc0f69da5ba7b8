import { readFileSync } from 'node:fs';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import { MorselSlab } from './morsel-slab.js';
import {
  DIRECT_WRITE_MIN_BYTES,
  DIRECT_WRITES_IN_FLIGHT,
  DIRECT_WRITES_QUEUED,
  OutputWriter,
  whyNotDirect,
} from './output-writer.js';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-output-writer-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('whyNotDirect', () => {
  it.each<[string, string, number, boolean, string | undefined]>([
    ['a large regular file', 'big.bin', DIRECT_WRITE_MIN_BYTES, true, undefined],
    ['--buffered', 'big.bin', DIRECT_WRITE_MIN_BYTES, false, 'asked for with --buffered'],
    ['a small output', 'small.bin', DIRECT_WRITE_MIN_BYTES - 1, true, 'a small output'],
    ['a device', '/dev/null', DIRECT_WRITE_MIN_BYTES, true, 'not a regular file'],
  ])('%s', async (_, name, size, want, why) => {
    const fh = await open(name.startsWith('/') ? name : join(dir, name), 'w');
    try {
      expect(await whyNotDirect(fh, size, want)).toBe(why);
    } finally {
      await fh.close();
    }
  });
});

/** Slot `i` of `slab`, filled with byte `fill`. */
async function filledSlot(slab: MorselSlab, fill: number): Promise<Buffer> {
  const slot = await slab.acquire();
  slot.buffer.fill(fill);
  return slot.buffer;
}

describe('OutputWriter on this machine (Linux, ext4 on a virtio disk)', () => {
  it('writes aligned morsels directly from the slab and a short tail through the page cache', async () => {
    const path = join(dir, 'direct.bin');
    const fh = await open(path, 'w');
    const slab = new MorselSlab(3, MiB);
    try {
      const size = 2 * MiB + 1000;
      await fh.truncate(size);
      const out = await OutputWriter.open(fh, DIRECT_WRITE_MIN_BYTES, (p) => slab.align(p));
      expect(out.mode).toBe('direct I/O');
      const [a, b, c] = [
        await filledSlot(slab, 1),
        await filledSlot(slab, 2),
        await filledSlot(slab, 3),
      ];
      await Promise.all([
        out.write(b, MiB),
        out.write(a, 0),
        out.write(c.subarray(0, 1000), 2 * MiB),
      ]);
      expect(out.mode).toBe('direct I/O'); // the tail went through the page cache, quietly
      await out.close();
      await fh.close();
      const got = await readFile(path);
      const want = Buffer.concat([
        Buffer.alloc(MiB, 1),
        Buffer.alloc(MiB, 2),
        Buffer.alloc(1000, 3),
      ]);
      expect(got.equals(want)).toBe(true);
    } finally {
      await fh.close().catch(() => undefined);
    }
  });

  it('makes a direct write on the calling thread while its budget lasts: done when write() returns', async () => {
    const path = join(dir, 'inline.bin');
    const fh = await open(path, 'w');
    const slab = new MorselSlab(1, MiB);
    try {
      await fh.truncate(MiB);
      const out = await OutputWriter.open(fh, DIRECT_WRITE_MIN_BYTES, (p) => slab.align(p));
      const written = out.write(await filledSlot(slab, 9), 0);
      // No await yet: a write handed to the pool would not have reached the file.
      expect(readFileSync(path).equals(Buffer.alloc(MiB, 9))).toBe(true);
      await written;
      expect(out.mode).toBe('direct I/O');
      await out.close();
    } finally {
      await fh.close().catch(() => undefined);
    }
  });

  it('falls back to the page cache for good when the disk refuses a buffer, losing nothing', async () => {
    const path = join(dir, 'refused.bin');
    const fh = await open(path, 'w');
    const slab = new MorselSlab(2, 2 * MiB);
    try {
      const out = await OutputWriter.open(fh, DIRECT_WRITE_MIN_BYTES, (p) => slab.align(p));
      expect(out.mode).toBe('direct I/O');
      // 16 bytes past an aligned slot start: aligned length and offset, misaligned memory.
      const slot = await filledSlot(slab, 7);
      await out.write(slot.subarray(16, 16 + MiB), 0);
      expect(out.mode).toBe('page cache (the disk refused a direct write (EINVAL))');
      await out.write((await filledSlot(slab, 8)).subarray(0, MiB), MiB);
      await out.close();
      await fh.close();
      const got = await readFile(path);
      expect(got.equals(Buffer.concat([Buffer.alloc(MiB, 7), Buffer.alloc(MiB, 8)]))).toBe(true);
    } finally {
      await fh.close().catch(() => undefined);
    }
  });

  it.each<[string, number, number, number]>([
    // [case, queue, morsels written at once, of which through the page cache], pool writes
    ['no line: the morsel past DIRECT_WRITES_IN_FLIGHT goes to the page cache', 0, 1, 1],
    ['a line of one: the second morsel past them', 1, 2, 1],
    ['the default line: a burst of 12 waits for the disk', DIRECT_WRITES_QUEUED, 12, 0],
  ])('%s', async (_, queue, extra, cached) => {
    const path = join(dir, `queue-${queue}.bin`);
    const fh = await open(path, 'w');
    const n = DIRECT_WRITES_IN_FLIGHT + extra;
    const slab = new MorselSlab(n, MiB);
    try {
      const out = await OutputWriter.open(
        fh,
        DIRECT_WRITE_MIN_BYTES,
        (p) => slab.align(p),
        true,
        // Off the calling thread, so the pool's slots and line are what is tested.
        { inline: false, queue },
      );
      const slots = [];
      for (let i = 0; i < n; i++) slots.push(await filledSlot(slab, i + 1));
      await Promise.all(slots.map((b, i) => out.write(b, i * MiB)));
      const share = Math.round((100 * (n - cached)) / n);
      expect(out.mode).toBe(
        cached === 0
          ? 'direct I/O'
          : `direct I/O for ${share} % of the bytes, the rest through the page cache while the disk was busy`,
      );
      await out.close();
      await fh.close();
      const want = Buffer.concat(slots.map((_, i) => Buffer.alloc(MiB, i + 1)));
      expect((await readFile(path)).equals(want)).toBe(true);
    } finally {
      await fh.close().catch(() => undefined);
    }
  });

  it('leaves the slots where they were when nothing aligns', async () => {
    const slab = new MorselSlab(1, MiB);
    expect(await slab.align(async () => false)).toBe(false);
    expect((await slab.acquire()).offset).toBe(0);
    const late = new MorselSlab(1, MiB);
    await late.acquire();
    await expect(late.align(async () => true)).rejects.toThrow(/before it is used/);
  });
});
