import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { benchFuseMounts, detachMount, parseMountinfoLine } from './fuse-mounts.js';

describe('parseMountinfoLine', () => {
  it.each([
    [
      '36 35 0:40 / /tmp/fl-bench-ab/mount-lan/mnt rw,nosuid - fuse.freeloader freeloader ro',
      {
        mountPoint: '/tmp/fl-bench-ab/mount-lan/mnt',
        fsType: 'fuse.freeloader',
        source: 'freeloader',
      },
    ],
    [
      // Optional fields before the separator, and a space escaped as \040.
      '40 1 0:39 / /tmp/my\\040data rw shared:1 master:2 - fuse.freeloader freeloader ro',
      { mountPoint: '/tmp/my data', fsType: 'fuse.freeloader', source: 'freeloader' },
    ],
    [
      '22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw',
      { mountPoint: '/', fsType: 'ext4', source: '/dev/sda1' },
    ],
    ['tab\\011and\\134backslash', null],
    ['', null],
    ['36 35 0:40 / /mnt rw no separator here at all', null],
  ])('%j', (line, parsed) => expect(parseMountinfoLine(line)).toEqual(parsed));
});

describe('benchFuseMounts', () => {
  const line = (/** @type {string} */ mp, /** @type {string} */ type) =>
    `36 35 0:40 / ${mp} rw,nosuid shared:9 - ${type} freeloader ro,user_id=0`;
  it.each([
    ['/tmp/fl-bench-ab12/mount-lan/mnt', 'fuse.freeloader', '/tmp/fl-bench-ab12'],
    ['/tmp/fl-bench-ab12/mount-loopback-1/mnt', 'fuse', '/tmp/fl-bench-ab12'],
    ['/tmp/fl-bench-ab12/x\\040y/mnt', 'fuseblk', '/tmp/fl-bench-ab12'],
    // Not ours: another file-system type, outside a scratch directory, or the directory itself.
    ['/tmp/fl-bench-ab12/mount-lan/mnt', 'ext4', null],
    ['/tmp/fl-bench-ab12/mount-lan/mnt', 'fusectl', null],
    ['/tmp/other/mnt', 'fuse.freeloader', null],
    ['/tmp/fl-benchmark/mnt', 'fuse.freeloader', null],
    ['/tmp/fl-bench-ab12', 'fuse.freeloader', null],
    ['/var/tmp/fl-bench-ab12/mnt', 'fuse.freeloader', null],
    ['/tmpx/fl-bench-ab12/mnt', 'fuse.freeloader', null],
  ])('%s (%s) → %s', (mp, type, runDir) => {
    const found = benchFuseMounts(`${line(mp, type)}\n`, '/tmp');
    expect(found).toEqual(runDir ? [{ mountPoint: mp.replace('\\040', ' '), runDir }] : []);
  });
  it('lists nested mounts before their parents', () => {
    const text = [
      line('/tmp/fl-bench-1/a', 'fuse.freeloader'),
      line('/tmp/fl-bench-1/a/b', 'fuse.freeloader'),
    ].join('\n');
    expect(benchFuseMounts(text, '/tmp/').map((m) => m.mountPoint)).toEqual([
      '/tmp/fl-bench-1/a/b',
      '/tmp/fl-bench-1/a',
    ]);
  });
});

describe('detachMount', () => {
  it('reports failure on a directory that is not a mount point', () => {
    const dir = mkdtempSync(join(tmpdir(), 'fl-detach-'));
    try {
      expect(detachMount(dir)).toBe(false);
    } finally {
      rmSync(dir, { recursive: true });
    }
  });
});
