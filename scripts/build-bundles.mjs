#!/usr/bin/env node
// `npm run build` after `tsc -b`: builds the browser bundles (the console, the agent's settings
// page) with vite, but only when their inputs changed since the last build. `tsc -b` is already
// incremental; vite is not, and rebuilding both bundles on every `npm start` cost over a minute on
// a 2-core machine. A SHA-256 over every input file's path and bytes is kept in
// node_modules/.cache/freeloader-bundles/<name>.sha256 once a build succeeded; the bundle is
// rebuilt when that hash differs or its output is missing.
// Usage: node scripts/build-bundles.mjs [--force] [NAME...]
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CLI_BUILD_INFOS } from '../apps/agent/bin/build-infos.js';

const REPO = join(dirname(fileURLToPath(import.meta.url)), '..');

/**
 * The bundles and what goes into each. Inputs name files or directories (walked, minus
 * node_modules and dist); the lock file stands for every dependency's version.
 */
export const BUNDLES = [
  {
    name: 'console',
    inputs: [
      'apps/console/src',
      'apps/console/index.html',
      'apps/console/vite.config.ts',
      'apps/console/tsconfig.json',
      'apps/console/package.json',
      'packages/protocol/src',
      'package-lock.json',
    ],
    output: 'apps/console/dist/index.html',
    command: ['npm', 'run', 'build', '-w', '@freeloader/console', '--if-present'],
  },
  {
    name: 'settings-ui',
    inputs: [
      'apps/agent/settings-ui/src',
      'apps/agent/settings-ui/index.html',
      'apps/agent/settings-ui/vite.config.ts',
      'apps/agent/settings-ui/tsconfig.json',
      // The page talks to the agent's local control API (src/control-api).
      'apps/agent/src/control-api',
      'apps/agent/package.json',
      'packages/protocol/src',
      'package-lock.json',
    ],
    output: 'apps/agent/settings-ui/dist/index.html',
    command: ['npm', 'run', 'build:ui', '-w', '@freeloader/agent'],
  },
  {
    // The CLI in one file, from tsc's output (this script runs after `tsc -b`).
    name: 'cli',
    inputs: [
      'apps/agent/src',
      'apps/agent/scripts/build-cli-bundle.mjs',
      'apps/agent/package.json',
      'packages/protocol/src',
      'packages/sources/src',
      'package-lock.json',
    ],
    output: 'apps/agent/dist/cli/freeloader.bundle.js',
    // tsc's build info, rewritten whenever it emits: bin/freeloader.js runs the bundle only
    // when it is newer than these, so it is built again after every emit.
    newerThan: CLI_BUILD_INFOS,
    command: ['node', 'apps/agent/scripts/build-cli-bundle.mjs'],
  },
];

/**
 * Hash of `inputs` (paths relative to `root`): every file's relative path and bytes, in sorted
 * order, so an edit, an added or a deleted file changes it and a mere `touch` does not.
 *
 * @example
 *   await inputsHash('/repo', ['apps/console/src', 'package-lock.json']) // → 'a3f1…' (64 hex)
 */
export async function inputsHash(root, inputs) {
  const files = (await Promise.all(inputs.map((i) => filesUnder(root, i)))).flat().sort();
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\0`);
    hash.update(await readFile(join(root, file)));
    hash.update('\0');
  }
  return hash.digest('hex');
}

async function filesUnder(root, path) {
  const entries = await readdir(join(root, path), { withFileTypes: true }).catch((e) => {
    if (e.code === 'ENOTDIR') return null;
    if (e.code === 'ENOENT') return [];
    throw e;
  });
  if (entries === null) return [path];
  const nested = await Promise.all(
    entries
      .filter((e) => e.name !== 'node_modules' && e.name !== 'dist')
      .map((e) => (e.isDirectory() ? filesUnder(root, join(path, e.name)) : [join(path, e.name)])),
  );
  return nested.flat();
}

/**
 * Build `bundle` unless its output exists and its inputs hash to the stamp of the last good
 * build. Returns 'built' or 'up to date'; throws when the build command fails (no stamp then).
 *
 * @example
 *   await buildIfChanged(BUNDLES[0], { root: REPO, stampDir: '/repo/node_modules/.cache/x' })
 */
export async function buildIfChanged(bundle, { root, stampDir, force = false }) {
  const stamp = join(stampDir, `${bundle.name}.sha256`);
  const hash = await inputsHash(root, bundle.inputs);
  const last = await readFile(stamp, 'utf8').catch(() => '');
  if (!force && last.trim() === hash && (await isFresh(root, bundle))) return 'up to date';
  const [cmd, ...args] = bundle.command;
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) {
    throw new Error(`${bundle.name}: \`${bundle.command.join(' ')}\` failed (${result.status})`);
  }
  await mkdir(stampDir, { recursive: true });
  // Hashed before the build: an input edited during the build makes the next run build again.
  await writeFile(`${stamp}.tmp`, `${hash}\n`);
  await rename(`${stamp}.tmp`, stamp);
  return 'built';
}

/**
 * Whether `bundle`'s output exists and is newer than each of its `newerThan` files (relative to
 * `root`, or absolute).
 */
async function isFresh(root, bundle) {
  const built = await stat(join(root, bundle.output)).catch(() => undefined);
  if (!built) return false;
  for (const file of bundle.newerThan ?? []) {
    const other = await stat(resolve(root, file)).catch(() => undefined);
    if (other && other.mtimeMs > built.mtimeMs) return false;
  }
  return true;
}

async function main() {
  const argv = process.argv.slice(2);
  const names = argv.filter((a) => !a.startsWith('--'));
  const unknown = names.filter((n) => !BUNDLES.some((b) => b.name === n));
  if (unknown.length > 0) throw new Error(`unknown bundle: ${unknown.join(', ')}`);
  const stampDir = join(REPO, 'node_modules', '.cache', 'freeloader-bundles');
  for (const bundle of BUNDLES.filter((b) => names.length === 0 || names.includes(b.name))) {
    const outcome = await buildIfChanged(bundle, {
      root: REPO,
      stampDir,
      force: argv.includes('--force'),
    });
    if (outcome === 'up to date') {
      console.error(`build-bundles: ${bundle.name} up to date (${relative(REPO, stampDir)})`);
    }
  }
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  main().catch((e) => {
    console.error(`build-bundles: ${e.message}`);
    process.exitCode = 1;
  });
}
