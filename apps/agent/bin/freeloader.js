#!/usr/bin/env node
// The `freeloader` command npm links into node_modules/.bin. This launcher is committed (and
// executable) so `npm ci` can link it on a fresh clone, before dist/ exists: npm skips a bin
// whose target is missing, and tsc does not mark its output executable. It only loads the built
// CLI, or says how to build it.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const main = new URL('../dist/cli/main.js', import.meta.url);
if (!existsSync(fileURLToPath(main))) {
  console.error('error: freeloader is not built yet; run `npm run build` in the repository first');
  process.exit(1);
}
await import(main.href);
