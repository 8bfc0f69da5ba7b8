import { chmodSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { collect } from './exact-stream.js';
import { FileSource } from './file-source.js';
import { generateContent } from './test-content.js';

const dir = mkdtempSync(join(tmpdir(), 'fl-file-source-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SIZE = 200_003;
function file(name: string, content = generateContent(SIZE, 3)) {
  const path = join(dir, name);
  writeFileSync(path, content);
  return { path, content, src: new FileSource(pathToFileURL(path)) };
}

describe('FileSource', () => {
  it('probes size, an etag-like stamp and range support', async () => {
    const { src } = file('probe.bin');
    expect(await src.probe()).toEqual({
      uri: src.uri,
      size: SIZE,
      etag: expect.stringMatching(/^"[0-9a-f]+-[0-9a-f]+-[0-9a-f]+"$/),
      lastModified: expect.stringMatching(/GMT$/),
      acceptsRanges: true,
    });
  });

  it.each([
    [0, 1],
    [0, 65_536],
    [12_345, 99_999],
    [SIZE - 7, SIZE],
    [9, 9],
  ])('reads bytes [%i, %i) exactly, buffered and streamed', async (start, end) => {
    const { src, content } = file(`range-${start}.bin`);
    const info = await src.probe();
    expect((await src.readRange(start, end, info)).equals(content.subarray(start, end))).toBe(true);
    const into = Buffer.alloc(end - start + 5);
    const got = await src.readRange(start, end, info, undefined, into);
    expect(got.buffer).toBe(into.buffer);
    expect(got.equals(content.subarray(start, end))).toBe(true);
    const streamed = await collect(await src.streamRange(start, end, info), end - start);
    expect(streamed.equals(content.subarray(start, end))).toBe(true);
  });

  it('readAll streams the whole file', async () => {
    const { src, content } = file('all.bin');
    const info = await src.probe();
    expect((await collect(await src.readAll(info), SIZE)).equals(content)).toBe(true);
  });

  it.each([
    ['truncated', (p: string) => writeFileSync(p, generateContent(100, 3))],
    ['rewritten with a new mtime', (p: string) => utimesSync(p, new Date(), new Date(2001, 1, 1))],
  ])('a file %s after the probe → SOURCE_CHANGED', async (what, change) => {
    const { src, path } = file(`changed-${what.replace(/\W/g, '-')}.bin`);
    const info = await src.probe();
    change(path);
    await expect(src.readRange(0, 10, info)).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
    await expect(src.readAll(info)).rejects.toMatchObject({ code: 'SOURCE_CHANGED' });
  });

  it('a missing file → SOURCE_ERROR not found', async () => {
    const src = new FileSource(pathToFileURL(join(dir, 'nope.bin')));
    await expect(src.probe()).rejects.toMatchObject({ code: 'SOURCE_ERROR', message: /not found/ });
  });

  it('a directory is not a source', async () => {
    await expect(new FileSource(pathToFileURL(dir)).probe()).rejects.toThrow(/not a file/);
  });

  it.skipIf(process.getuid?.() === 0)(
    'an unreadable file → SOURCE_ERROR access denied',
    async () => {
      const { src, path } = file('locked.bin');
      const info = await src.probe();
      chmodSync(path, 0o000);
      await expect(src.readRange(0, 1, info)).rejects.toThrow(/access denied/);
    },
  );

  it('rejects ranges outside the object', async () => {
    const { src } = file('bad-range.bin');
    const info = await src.probe();
    await expect(src.readRange(0, SIZE + 1, info)).rejects.toMatchObject({ code: 'BAD_REQUEST' });
  });
});
