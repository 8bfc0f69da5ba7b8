#!/usr/bin/env node
// The `freeloader` command as one file (dist/cli/freeloader.bundle.js), which bin/freeloader.js
// runs for every command but `manager` and `cluster`. Node 20 resolves, reads and compiles each
// ES module on its own and has no compile cache: the unbundled CLI loads ~470 modules (200 of
// them TypeBox's, 55 undici's) before its first request, 0.43–0.51 CPU-s for `--version` on
// the Intel VM of issue 19, 0.17–0.19 CPU-s bundled; a 1 GiB `get` ~2.0 → ~1.74 CPU-s.
// Built from tsc's output (dist/), after `tsc -b`, by scripts/build-bundles.mjs.
// `manager` and `cluster` load the manager package in this process; it is left out (external),
// and those two commands run unbundled, so one process never holds two copies of the protocol
// package (its error classes are checked with instanceof).
import { rename } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'rolldown';

const AGENT = join(dirname(fileURLToPath(import.meta.url)), '..');
export const BUNDLE = join(AGENT, 'dist/cli/freeloader.bundle.js');

// The bundle sits in dist/cli/ beside main.js, so every `new URL('../../…', import.meta.url)`
// in the agent's modules (the native addon, the settings page, the mount's worker) resolves as
// it does from their own dist/ folder one level below the agent.
const tmp = `${BUNDLE}.tmp.js`;
await build({
  input: join(AGENT, 'dist/cli/main.js'),
  platform: 'node',
  logLevel: 'warn',
  external: ['@freeloader/manager', 'node-fuse-bindings'],
  output: { file: tmp, format: 'esm', codeSplitting: false, comments: { legal: false } },
});
// Renamed into place: a command started meanwhile runs the old bundle or the new, never half.
await rename(tmp, BUNDLE);
