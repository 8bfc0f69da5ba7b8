import { mkdir, mkdtemp, readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module script without type declarations
import { buildIfChanged } from './build-bundles.mjs';

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'fl-bundles-'));
  await mkdir(join(root, 'src'));
  await writeFile(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  await writeFile(join(root, 'lock.json'), '{}\n');
});
afterAll(async () => {
  await rm(root, { recursive: true, force: true });
});

/** A real build command: appends a line to runs.log and writes the output. */
const bundle = {
  name: 'demo',
  inputs: ['src', 'lock.json'],
  output: 'out/index.html',
  command: [
    process.execPath,
    '-e',
    "const fs=require('fs');fs.mkdirSync('out',{recursive:true});" +
      "fs.writeFileSync('out/index.html','x');fs.appendFileSync('runs.log','run\\n')",
  ],
};

async function runs(): Promise<number> {
  const log = await readFile(join(root, 'runs.log'), 'utf8').catch(() => '');
  return log.split('\n').filter(Boolean).length;
}

describe('buildIfChanged', () => {
  it('builds once, skips while the inputs are unchanged, rebuilds on a change', async () => {
    const opts = { root, stampDir: join(root, 'stamps') };
    expect(await buildIfChanged(bundle, opts)).toBe('built');
    expect(await buildIfChanged(bundle, opts)).toBe('up to date');
    expect(await runs()).toBe(1);

    // A touch alone changes nothing.
    const later = new Date(Date.now() + 60_000);
    await utimes(join(root, 'src', 'a.ts'), later, later);
    expect(await buildIfChanged(bundle, opts)).toBe('up to date');

    await writeFile(join(root, 'src', 'a.ts'), 'export const a = 2;\n');
    expect(await buildIfChanged(bundle, opts)).toBe('built');
    await writeFile(join(root, 'src', 'b.ts'), 'export const b = 1;\n');
    expect(await buildIfChanged(bundle, opts)).toBe('built');
    await writeFile(join(root, 'lock.json'), '{"v":2}\n');
    expect(await buildIfChanged(bundle, opts)).toBe('built');
    expect(await runs()).toBe(4);

    // The output removed (e.g. rm -rf dist): built again although the inputs are the same.
    await rm(join(root, 'out'), { recursive: true });
    expect(await buildIfChanged(bundle, opts)).toBe('built');
    expect(await buildIfChanged(bundle, { ...opts, force: true })).toBe('built');
    expect(await runs()).toBe(6);
  });

  it('builds again when a newerThan file is newer than the output, though the inputs are not', async () => {
    const opts = { root, stampDir: join(root, 'stamps') };
    await writeFile(join(root, 'emitted.info'), 'tsc\n');
    const watched = { ...bundle, name: 'watched', newerThan: ['emitted.info', 'missing.info'] };
    const before = await runs();
    expect(await buildIfChanged(watched, opts)).toBe('built');
    const built = new Date(Date.now() + 60_000);
    await utimes(join(root, 'out', 'index.html'), built, built);
    expect(await buildIfChanged(watched, opts)).toBe('up to date');
    // tsc emitted after the bundle was built (same content, later time).
    const emitted = new Date(Date.now() + 120_000);
    await utimes(join(root, 'emitted.info'), emitted, emitted);
    expect(await buildIfChanged(watched, opts)).toBe('built');
    expect(await runs()).toBe(before + 2);
  });

  it('leaves no stamp when the build fails, so the next run tries again', async () => {
    const failing = {
      ...bundle,
      name: 'broken',
      command: [process.execPath, '-e', 'process.exit(3)'],
    };
    const opts = { root, stampDir: join(root, 'stamps') };
    await expect(buildIfChanged(failing, opts)).rejects.toThrow(/broken: .* failed \(3\)/);
    await expect(readFile(join(root, 'stamps', 'broken.sha256'))).rejects.toThrow();
  });
});
