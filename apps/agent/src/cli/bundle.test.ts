import { execFile } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { CLI_BUILD_INFOS } from '../../bin/build-infos.js';
import { CLI_MAIN } from '../test/processes.js';

const run = promisify(execFile);
const at = (p: string): string => fileURLToPath(new URL(p, import.meta.url));
const BUNDLE = at('../../dist/cli/freeloader.bundle.js');

/** `freeloader …args` through the launcher, bundled or not; stdout. */
async function freeloader(args: string[], unbundled: boolean): Promise<string> {
  const env = { ...process.env, FREELOADER_UNBUNDLED: unbundled ? '1' : '0' };
  return (await run(process.execPath, [CLI_MAIN, ...args], { env })).stdout;
}

/**
 * The launcher runs the CLI bundled into one file (scripts/build-cli-bundle.mjs) when it is newer
 * than tsc's last emit; the integration tests run it through the launcher, so they test the
 * bundle. These check that `npm run build` leaves one to run and that it is the same program.
 */
describe('the bundled CLI', { timeout: 60_000 }, () => {
  it('is newer than tsc’s last emit after `npm run build` (so the launcher runs it)', () => {
    const built = statSync(BUNDLE, { throwIfNoEntry: false });
    expect(built, `${BUNDLE} is missing: run \`npm run build\``).toBeDefined();
    for (const info of CLI_BUILD_INFOS) {
      expect(statSync(info).mtimeMs, `${info} is newer: run \`npm run build\``).toBeLessThanOrEqual(
        built!.mtimeMs,
      );
    }
  });

  it('finds every file it names relative to itself (the addon, the settings page, the mount’s worker)', () => {
    const source = readFileSync(BUNDLE, 'utf8');
    const named = [...source.matchAll(/new URL\(["']([^"']+)["'], import\.meta\.url\)/g)].map(
      (m) => m[1]!,
    );
    expect(named).toContain('../dataset-fs/morsel-worker.js');
    // The native addon is built by `npm ci`'s postinstall; the rest by `npm run build`.
    const missing = named.filter((p) => !existsSync(resolve(dirname(BUNDLE), p)));
    expect(missing).toEqual([]);
  });

  it.each(['', 'get ', 'agent ', 'mount '])(
    'answers `freeloader %s--help` as the unbundled CLI does',
    async (command) => {
      const args = [...command.split(' ').filter(Boolean), '--help'];
      expect(await freeloader(args, false)).toBe(await freeloader(args, true));
    },
  );
});
