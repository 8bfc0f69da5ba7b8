import { FileSource } from './file-source.js';
import { HttpSource } from './http-source.js';
import type { Source, SourceOptions } from './source.js';
import { parseSourceUri } from './uri.js';

/** Builds a source for a URI already vetted by {@link parseSourceUri}. */
export type SourceFactory = (url: URL, options: SourceOptions) => Source;

const factories = new Map<string, SourceFactory>([
  ['http', (url, o) => new HttpSource(url, o)],
  ['https', (url, o) => new HttpSource(url, o)],
  ['file', (url) => new FileSource(url)],
]);

/**
 * Plug in a scheme (sftp, ftp, s3 …) or replace a built-in one.
 *
 * @example registerSourceScheme('s3', (url, opts) => new S3Source(url, opts));
 */
export function registerSourceScheme(scheme: string, factory: SourceFactory): void {
  if (!/^[a-z][a-z0-9+.-]*$/.test(scheme)) throw new TypeError(`bad scheme name "${scheme}"`);
  factories.set(scheme, factory);
}

/** Schemes a source can be opened for (file included; `allowFile` still gates it). */
export function sourceSchemes(): string[] {
  return [...factories.keys()];
}

/**
 * Open a source for `uri`, choosing the implementation by scheme.
 *
 * @throws FreeLoaderError BAD_URI or UNSUPPORTED_SCHEME (see {@link parseSourceUri}).
 * @example
 *   const src = openSource('https://data.example.org/run42.h5', { connections: 8 });
 *   const info = await src.probe();
 *   const head = await src.readRange(0, 1 << 20, info);
 *   await src.close();
 */
export function openSource(uri: string, options: SourceOptions = {}): Source {
  const url = parseSourceUri(uri, {
    allowFile: options.allowFile ?? false,
    schemes: sourceSchemes(),
  });
  return factories.get(url.protocol.slice(0, -1))!(url, options);
}
