#!/usr/bin/env node
// The root postinstall: patches the optional FUSE addon (node-fuse-bindings) with patch-package
// (apps/agent/patches: it builds on Node 20, and reuses one Buffer for kernel reads instead of
// an external allocation per read; see apps/agent/src/mount/README.md), then builds it with
// node-gyp ≥ 10. Its own install script is denied in the root `allowScripts`: it would try to
// download a prebuilt binary and would build before the patch is applied. Whatever is missing
// (the package with --omit=optional, libfuse, a compiler) this says so and exits 0, so `npm ci`
// works everywhere and only `freeloader mount` is unavailable.
// Usage: node apps/agent/scripts/build-fuse.mjs [--force]
import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gypRebuild } from './gyp-rebuild.mjs';

const require = createRequire(import.meta.url);
const say = (m) => console.error(`build-fuse: ${m}`);
const force = process.argv.includes('--force');

let pkgDir;
try {
  pkgDir = dirname(require.resolve('node-fuse-bindings/package.json'));
} catch {
  say('node-fuse-bindings is not installed (optional dependency): skipped');
  process.exit(0);
}

const repo = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
let patcher;
try {
  patcher = require.resolve('patch-package/index.js');
} catch {
  say('patch-package is not installed (dev dependency): cannot patch, so not building');
  process.exit(0);
}
const patched = spawnSync(
  process.execPath,
  [patcher, '--patch-dir', 'apps/agent/patches', '--error-on-fail'],
  { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'], encoding: 'utf8' },
);
if (patched.status !== 0) {
  say(`patching failed, not building:\n${patched.stdout}${patched.stderr}`);
  process.exit(0);
}
say('node-fuse-bindings patched');

const addon = join(pkgDir, 'build', 'Release', 'fuse_bindings.node');
const source = join(pkgDir, 'fuse-bindings.cc');
if (!force && existsSync(addon) && statSync(addon).mtimeMs >= statSync(source).mtimeMs) {
  say('addon already built');
  process.exit(0);
}

if (spawnSync('pkg-config', ['--exists', 'fuse'], { stdio: 'ignore' }).status !== 0) {
  say(
    'libfuse 2 development files not found: `freeloader mount` will be unavailable.\n' +
      '  Debian/Ubuntu: apt-get install -y fuse libfuse-dev pkg-config g++ make python3\n' +
      '  then: node apps/agent/scripts/build-fuse.mjs',
  );
  process.exit(0);
}

gypRebuild(pkgDir, say, 'freeloader mount will be unavailable');
