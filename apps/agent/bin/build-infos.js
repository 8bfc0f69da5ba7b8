// The build info `tsc -b` rewrites whenever it emits into the CLI bundle's inputs (the agent,
// protocol and sources packages). The launcher runs the bundle only when it is newer than all of
// them, `npm run build` (scripts/build-bundles.mjs) bundles again when one is newer, and
// src/cli/bundle.test.ts checks the build left them older: one list for the three.
// Dependency-free: the launcher loads it before anything is built.
import { fileURLToPath } from 'node:url';

/** Absolute paths of the build-info files the bundle must be newer than. */
export const CLI_BUILD_INFOS = [
  '../dist/.tsbuildinfo',
  '../../../packages/protocol/dist/.tsbuildinfo',
  '../../../packages/sources/dist/.tsbuildinfo',
].map((p) => fileURLToPath(new URL(p, import.meta.url)));
