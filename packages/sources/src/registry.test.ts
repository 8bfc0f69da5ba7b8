import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FileSource } from './file-source.js';
import { HttpSource } from './http-source.js';
import { openSource, registerSourceScheme, sourceSchemes } from './registry.js';
import type { Source } from './source.js';

describe('openSource', () => {
  it.each([
    ['http://127.0.0.1:1/x', {}, HttpSource],
    ['https://127.0.0.1:1/x', {}, HttpSource],
    [pathToFileURL('/tmp/x').href, { allowFile: true }, FileSource],
  ])('%s → the right implementation', async (uri, opts, kind) => {
    const src = openSource(uri, opts);
    expect(src).toBeInstanceOf(kind);
    await src.close();
  });

  it.each([
    ['file:///tmp/x', {}, 'UNSUPPORTED_SCHEME'],
    ['ftp://h/x', {}, 'UNSUPPORTED_SCHEME'],
    ['::', {}, 'BAD_URI'],
  ])('%s → %s', (uri, opts, code) => {
    expect(() => openSource(uri, opts)).toThrow(expect.objectContaining({ code }));
  });

  it('lets new schemes plug in', async () => {
    const seen: string[] = [];
    registerSourceScheme('fake', (url) => {
      seen.push(url.href);
      return { uri: url.href } as unknown as Source;
    });
    expect(sourceSchemes()).toContain('fake');
    expect(openSource('fake://bucket/key').uri).toBe('fake://bucket/key');
    expect(seen).toEqual(['fake://bucket/key']);
    expect(() => registerSourceScheme('Bad Scheme', () => ({}) as Source)).toThrow(TypeError);
  });
});
