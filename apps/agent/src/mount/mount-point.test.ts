import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseMountInfo, prepareMountPoint, probeDir } from './mount-point.js';

describe('parseMountInfo', () => {
  it.each([
    [
      '36 35 98:0 / /mnt/x rw,nosuid - fuse.freeloader freeloader ro,user_id=0',
      [{ device: '98:0', mountPoint: '/mnt/x', fsType: 'fuse.freeloader', source: 'freeloader' }],
    ],
    [
      // Optional fields before the separator, and a space escaped as \040.
      '40 1 0:39 / /tmp/my\\040data rw shared:1 master:2 - fuse.freeloader freeloader ro',
      [
        {
          device: '0:39',
          mountPoint: '/tmp/my data',
          fsType: 'fuse.freeloader',
          source: 'freeloader',
        },
      ],
    ],
    ['garbage\n\n', []],
  ])('%s', (text, expected) => {
    expect(parseMountInfo(text)).toEqual(expected);
  });
});

describe('mount points', () => {
  let root: string;
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'fl-mp-'));
    await mkdir(join(root, 'empty'));
    await mkdir(join(root, 'full'));
    await writeFile(join(root, 'full', 'f'), 'x');
    await writeFile(join(root, 'file'), 'x');
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it.each([
    ['empty', 'dir'],
    ['missing', 'missing'],
    ['file', 'not-dir'],
  ])('probeDir(%s) is %s', async (name, expected) => {
    expect(await probeDir(join(root, name))).toBe(expected);
  });

  it.each([
    ['empty', undefined],
    ['new/deeper', undefined],
    ['full', /not empty/],
    ['file', /not a directory/],
  ])('prepareMountPoint(%s)', async (name, error) => {
    const p = prepareMountPoint(join(root, name));
    if (error) await expect(p).rejects.toThrow(error);
    else {
      expect(await p).toEqual({ dir: join(root, name), cleared: false });
      expect(await probeDir(join(root, name))).toBe('dir');
    }
  });
});
