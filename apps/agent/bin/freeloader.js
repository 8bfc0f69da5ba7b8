#!/usr/bin/env node
// The `freeloader` command npm links into node_modules/.bin. This launcher is committed (and
// executable) so `npm ci` can link it on a fresh clone, before dist/ exists: npm skips a bin
// whose target is missing, and tsc does not mark its output executable. It only loads the built
// CLI, or says how to build it.
//
// It loads the CLI bundled into one file (scripts/build-cli-bundle.mjs; a third of the start-up
// CPU of ~470 modules loaded one by one) unless the bundle is missing or older than tsc's last
// emit (a `tsc -b` without `npm run build`), or the command is `manager` or `cluster`, which
// load the manager package in this process and so run unbundled (see the bundle script).
// FREELOADER_UNBUNDLED=1 runs tsc's output anyway (stack traces name the source files).
import { existsSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { setFlagsFromString } from 'node:v8';
import { CLI_BUILD_INFOS } from './build-infos.js';

const main = new URL('../dist/cli/main.js', import.meta.url);
const bundle = new URL('../dist/cli/freeloader.bundle.js', import.meta.url);
const UNBUNDLED_COMMANDS = new Set(['manager', 'cluster']);
/**
 * Commands that read a dataset and exit: they run without V8's optimizing compiler. A read's hot
 * work is native (AES-GCM, SHA-256, socket reads); the JavaScript around it ran no faster
 * optimized (0.55 CPU-s per further GiB either way, loopback, 4 donors), while compiling it took
 * 0.13–0.19 CPU-s per read on the cores the read needs: `get` of 1 GiB fell from 0.73 to 0.58
 * client CPU-s and went from 1.48 to 1.73 GB/s (AMD EPYC VM, 2 cores, session 21).
 * FREELOADER_V8_OPT=1 keeps the optimizer.
 */
const INTERPRETED_COMMANDS = new Set(['get']);

if (!existsSync(fileURLToPath(main))) {
  console.error('error: freeloader is not built yet; run `npm run build` in the repository first');
  process.exit(1);
}
const command = process.argv.slice(2).find((a) => !a.startsWith('-'));
if (INTERPRETED_COMMANDS.has(command ?? '') && process.env.FREELOADER_V8_OPT !== '1') {
  setFlagsFromString('--no-opt');
}
await import((useBundle() ? bundle : main).href);

function useBundle() {
  if (process.env.FREELOADER_UNBUNDLED === '1') return false;
  if (command !== undefined && UNBUNDLED_COMMANDS.has(command)) return false;
  const built = mtimeMs(bundle);
  return built !== undefined && CLI_BUILD_INFOS.every((p) => (mtimeMs(p) ?? 0) <= built);
}

function mtimeMs(url) {
  try {
    return statSync(url).mtimeMs;
  } catch {
    return undefined;
  }
}
