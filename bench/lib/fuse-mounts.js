// FUSE mounts a benchmark run left behind: finding them in /proc/self/mountinfo and detaching
// them. A `kill -9` during mount-lan or mount-loopback leaves the mount point under the run's
// scratch directory; once its `freeloader mount` is gone, every access there fails with
// "Transport endpoint is not connected", `rm -r` of the scratch directory included.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, sep } from 'node:path';

/**
 * One line of /proc/self/mountinfo (proc(5)): the mount point is field 5, then optional fields up
 * to a lone `-`, then the type and source. Octal escapes (`\040` for a space) are decoded. The
 * bench twin of the agent's parseMountInfo (apps/agent/src/mount/mount-point.ts): cleanup.js must
 * work without a build.
 *
 * @param {string} line
 * @returns {{ mountPoint: string, fsType: string, source: string } | null} null for a malformed line
 * @example parseMountinfoLine('36 35 0:40 / /tmp/a\\040b rw - fuse.freeloader freeloader ro')
 *   // { mountPoint: '/tmp/a b', fsType: 'fuse.freeloader', source: 'freeloader' }
 */
export function parseMountinfoLine(line) {
  const fields = line.split(' ');
  const dash = fields.indexOf('-', 6);
  if (fields.length < 10 || dash < 0 || dash + 2 >= fields.length) return null;
  return {
    mountPoint: unescapeOctal(/** @type {string} */ (fields[4])),
    fsType: unescapeOctal(/** @type {string} */ (fields[dash + 1])),
    source: unescapeOctal(/** @type {string} */ (fields[dash + 2])),
  };
}

/** @param {string} s */
function unescapeOctal(s) {
  return s.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
}

/**
 * FUSE mounts (type `fuse`, `fuseblk` or `fuse.*`; never `fusectl`) strictly inside a benchmark
 * scratch directory `<root>/fl-bench-*`, deepest first so nested mounts detach before their
 * parents. Anything else in `mountinfo` is none of the harness's business.
 *
 * @param {string} mountinfo text of /proc/self/mountinfo
 * @param {string} root where scratch directories live (os.tmpdir())
 * @returns {{ mountPoint: string, runDir: string }[]} runDir: the scratch directory holding it
 * @example benchFuseMounts('… / /tmp/fl-bench-x/mount-lan/mnt rw - fuse.freeloader freeloader ro', '/tmp')
 *   // [{ mountPoint: '/tmp/fl-bench-x/mount-lan/mnt', runDir: '/tmp/fl-bench-x' }]
 */
export function benchFuseMounts(mountinfo, root) {
  const prefix = root.endsWith(sep) ? root : root + sep;
  /** @type {{ mountPoint: string, runDir: string }[]} */
  const out = [];
  for (const line of mountinfo.split('\n')) {
    const m = parseMountinfoLine(line);
    if (!m || !/^fuse(blk)?(\.|$)/.test(m.fsType) || !m.mountPoint.startsWith(prefix)) continue;
    const [top, ...rest] = m.mountPoint.slice(prefix.length).split(sep);
    if (!top?.startsWith('fl-bench-') || rest.length === 0 || rest.includes('..')) continue;
    out.push({ mountPoint: m.mountPoint, runDir: join(root, top) });
  }
  return out.sort((a, b) => b.mountPoint.length - a.mountPoint.length);
}

/**
 * The benchmark FUSE mounts of this mount namespace now (see {@link benchFuseMounts}).
 *
 * @param {string} root
 */
export function listBenchFuseMounts(root) {
  let text = '';
  try {
    text = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    // not Linux: nothing to find
  }
  return benchFuseMounts(text, root);
}

/**
 * Detach a mount lazily, dead server or not: `fusermount -uz`, else `umount -l` (root, or a
 * fusermount that is missing). Synchronous, for exit hooks. Never throws.
 *
 * @param {string} dir
 * @returns {boolean} whether one of them succeeded
 * @example onCleanup(() => detachMount(dir));
 */
export function detachMount(dir) {
  for (const [cmd, args] of /** @type {const} */ ([
    ['fusermount', ['-u', '-z', dir]],
    ['umount', ['-l', dir]],
  ])) {
    const r = spawnSync(cmd, args, { stdio: 'ignore', timeout: 15_000 });
    if (r.status === 0) return true;
  }
  return false;
}
