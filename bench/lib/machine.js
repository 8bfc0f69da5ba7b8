import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { FREELOADER_CLI } from './freeloader.js';

/**
 * Which FreeLoader build a benchmark drove: its checkout's commit, and the checkout when it is
 * not this one (BENCH_FREELOADER_ROOT, for before/after runs in one session).
 *
 * @returns {{ freeloaderCommit: string, freeloaderRoot?: string }}
 * @example machineBuild() // { freeloaderCommit: 'af4184c' }
 */
export function machineBuild() {
  let commit = 'unknown';
  try {
    commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: dirname(FREELOADER_CLI),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
  } catch {
    // not a git checkout (a copied build): the commit stays unknown
  }
  const root = process.env.BENCH_FREELOADER_ROOT;
  return { freeloaderCommit: commit, ...(root ? { freeloaderRoot: root } : {}) };
}

/**
 * The VM's free page reporting (virtio-balloon), when the kernel has it: freed guest memory is
 * handed back to the host, and the next write into it takes a host fault. On the VM of
 * session 16 (Intel Xeon; order 9, min_free_ms 0: at once) that made page-cache writes and
 * their CPU bimodal run to run (0.18 or 0.6–0.8 system CPU-s per 512 MiB of `fs.write`s).
 *
 * @returns {string | undefined}
 * @example pageReporting() // 'order 9, min_free_ms 0'
 */
export function pageReporting() {
  const dir = '/sys/module/page_reporting/parameters';
  const read = (/** @type {string} */ name) => {
    try {
      return readFileSync(join(dir, name), 'utf8').trim();
    } catch {
      return undefined;
    }
  };
  const order = read('page_reporting_order');
  if (order === undefined) return undefined;
  const minFree = read('min_free_ms');
  return `order ${order}` + (minFree === undefined ? '' : `, min_free_ms ${minFree}`);
}
