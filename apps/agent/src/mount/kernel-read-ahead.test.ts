import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { raiseKernelReadAhead } from './kernel-read-ahead.js';

describe('raiseKernelReadAhead', () => {
  it('changes nothing where the file system has no read-ahead setting, and says why', async () => {
    // /proc has no backing device of its own in /sys/class/bdi.
    const got = await raiseKernelReadAhead('/proc');
    expect(got.changed).toBe(false);
    if (!got.changed) expect(got.why).toMatch(/ENOENT|not Linux/);
  });

  it('changes nothing where nothing is mounted', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'fl-ra-'));
    try {
      const got = await raiseKernelReadAhead(dir);
      expect(got).toMatchObject({ changed: false });
      if (!got.changed) expect(got.why).toMatch(/nothing is mounted|not Linux/);
    } finally {
      await rm(dir, { recursive: true });
    }
  });

  it('never lowers a larger setting', async () => {
    // Asking for 0 KiB at / (always a mount): whatever its setting is, it is not smaller.
    const got = await raiseKernelReadAhead('/', 0);
    expect(got.changed).toBe(false);
  });
});
