#!/usr/bin/env node
// Makes the README's two commands work on a fresh Debian machine with no other step: before
// `npm test` (every package in .ci/apt-packages) and `npm start` (what the embedded PostgreSQL
// needs as root: `acl`, so the data directory under a closed home is opened to `postgres` alone),
// the Debian packages that are missing are installed with apt-get when we are root, or named in
// one `apt-get install` line to run when we are not. Elsewhere (not Debian) it says nothing.
// Usage: node scripts/ensure-debian-packages.mjs test|start
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const purpose = process.argv[2];
// APT_PACKAGES_FILE: another list (tests).
const listFile =
  process.env.APT_PACKAGES_FILE ?? fileURLToPath(new URL('../.ci/apt-packages', import.meta.url));
const isRoot = process.getuid?.() === 0;

/** The packages `purpose` needs on this machine. */
function wanted() {
  if (purpose === 'test') return readFileSync(listFile, 'utf8').split(/\s+/).filter(Boolean);
  if (purpose === 'start') return isRoot ? ['acl'] : [];
  console.error('usage: ensure-debian-packages.mjs test|start');
  process.exit(2);
}

const has = (cmd) => spawnSync('sh', ['-c', `command -v ${cmd}`], { stdio: 'ignore' }).status === 0;
if (!has('dpkg-query') || !has('apt-get')) process.exit(0);

const installed = (pkg) =>
  spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout.includes(
    'install ok installed',
  );
const missing = wanted().filter((p) => !installed(p));
if (missing.length === 0) process.exit(0);

const line = `apt-get install -y --no-install-recommends ${missing.join(' ')}`;
if (!isRoot) {
  console.error(`npm ${purpose} needs these Debian packages: ${missing.join(' ')}`);
  console.error(`install them once: sudo apt-get update && sudo ${line}`);
  process.exit(1);
}
console.error(`npm ${purpose}: installing the Debian packages it needs: ${missing.join(' ')}`);
const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
for (const args of [['update', '-qq'], line.split(' ').slice(1).concat('-qq')]) {
  const r = spawnSync('apt-get', args, { stdio: 'inherit', env });
  if (r.status !== 0) {
    console.error(`apt-get ${args.join(' ')} failed (exit ${r.status}); run it by hand: ${line}`);
    process.exit(1);
  }
}
// The FUSE addon is built at `npm ci` only when libfuse-dev was there; it may have come just now.
if (missing.some((p) => /fuse|g\+\+|make|pkg-config/.test(p))) {
  const addon = fileURLToPath(new URL('../apps/agent/scripts/build-fuse.mjs', import.meta.url));
  spawnSync(process.execPath, [addon], { stdio: 'inherit' });
}
