import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { bdiOf, raiseKernelReadAhead } from './kernel-read-ahead.js';

describe('bdiOf', () => {
  it.each([
    [50n, '/sys/class/bdi/0:50'],
    [(8n << 8n) | 1n, '/sys/class/bdi/8:1'],
    // glibc's makedev: a minor above 255 keeps its low byte at the bottom, the rest at bit 20;
    // a major above 4095 keeps its low 12 bits at bit 8, the rest at bit 32.
    [0x1200034n, '/sys/class/bdi/0:4660'],
    [(0x1000n << 32n) | (0x002n << 8n), '/sys/class/bdi/4098:0'],
  ])('dev %s → %s', (dev, want) => {
    expect(bdiOf(dev)).toBe(want);
  });
});

describe('raiseKernelReadAhead', () => {
  it('changes nothing where the file system has no read-ahead setting, and says why', async () => {
    // /proc has no backing device of its own in /sys/class/bdi.
    const got = await raiseKernelReadAhead('/proc');
    expect(got.changed).toBe(false);
    if (!got.changed) expect(got.why).toMatch(/ENOENT|not Linux/);
  });

  it('never lowers a larger setting', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fl-ra-'));
    try {
      // Asking for 0 KiB: whatever the disk's setting is, it is not smaller.
      const got = await raiseKernelReadAhead(dir, 0);
      expect(got.changed).toBe(false);
    } finally {
      await rm(dir, { recursive: true });
    }
  });
});
