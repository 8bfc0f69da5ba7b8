// `node-gyp rebuild` of one of the agent's optional addons, for the root postinstall's build
// scripts (build-fuse.mjs, build-data-path.mjs). Never throws and never exits non-zero: a
// missing compiler or node-gyp only costs the feature the addon speeds up or enables.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/**
 * Build the addon in `dir`; true when built. `say` reports, `without` says what is lost.
 *
 * @example gypRebuild(pkgDir, say, 'freeloader mount will be unavailable')
 */
export function gypRebuild(dir, say, without) {
  let gyp;
  try {
    gyp = require.resolve('node-gyp/bin/node-gyp.js', { paths: [dir] });
  } catch {
    say(`node-gyp is not installed: skipped (${without})`);
    return false;
  }
  const args = [gyp, 'rebuild'];
  // Build against the headers installed next to this node (no download) when they are there.
  const prefix = dirname(dirname(process.execPath));
  if (!process.env.npm_config_nodedir && existsSync(join(prefix, 'include', 'node', 'node.h'))) {
    args.push(`--nodedir=${prefix}`);
  }
  say(`building in ${dir}`);
  const r = spawnSync(process.execPath, args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.status !== 0) {
    say(`build failed (${without}):\n${String(r.stderr).slice(-2000)}`);
    return false;
  }
  say('built');
  return true;
}
