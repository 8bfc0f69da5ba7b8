import { execFileSync } from 'node:child_process';
import { dirname } from 'node:path';
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
