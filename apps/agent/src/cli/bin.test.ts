import { execFile } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const REPO = fileURLToPath(new URL('../../../../', import.meta.url));
const AGENT = fileURLToPath(new URL('../../', import.meta.url));

/**
 * `freeloader` as the README runs it: `npm ci` links the agent's bin into node_modules/.bin, so
 * `npx freeloader` works from the repository once it is built. npm skips a bin whose target does
 * not exist yet, so the target must be a committed, executable file, not build output.
 */
describe('the freeloader command', { timeout: 60_000 }, () => {
  const bin = JSON.parse(readFileSync(`${AGENT}package.json`, 'utf8')).bin.freeloader as string;

  it('is a committed executable launcher, not build output', () => {
    expect(bin).not.toMatch(/dist\//);
    const target = `${AGENT}${bin}`;
    expect(statSync(target).mode & 0o111).toBe(0o111);
    expect(readFileSync(target, 'utf8')).toMatch(/^#!\/usr\/bin\/env node\n/);
  });

  it('runs as `npx --no-install freeloader` from the repository root', async () => {
    const { stdout } = await run('npx', ['--no-install', 'freeloader', '--version'], {
      cwd: REPO,
    });
    expect(stdout.trim()).toBe('0.1.0');
  });
});
