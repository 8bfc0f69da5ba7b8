import type { Dispatcher } from 'undici';
import { FreeLoaderError } from '@freeloader/protocol';
import { header, type Headers } from './http-request.js';
import type { SourceInfo } from './source.js';

/** A strong entity tag (usable in If-Match / If-Range); null for weak or absent ones. */
export function strongEtag(etag: string | null): string | null {
  return etag !== null && !etag.startsWith('W/') ? etag : null;
}

/**
 * Preconditions that make the server refuse (412) or — for a range — answer with the whole
 * object (200) when the object is no longer the version probed. Strong ETag first, since a
 * Last-Modified date only has one-second resolution.
 */
export function preconditions(expect: SourceInfo, ranged: boolean): Headers {
  const etag = strongEtag(expect.etag);
  if (etag !== null) return ranged ? { 'if-match': etag, 'if-range': etag } : { 'if-match': etag };
  if (expect.lastModified !== null) {
    const since = { 'if-unmodified-since': expect.lastModified };
    return ranged ? { ...since, 'if-range': expect.lastModified } : since;
  }
  return {};
}

/** Opaque part of an entity tag, so `W/"x"` and `"x"` compare equal (weak comparison). */
function opaque(etag: string): string {
  return etag.startsWith('W/') ? etag.slice(2) : etag;
}

/**
 * Throw SOURCE_CHANGED when a response's validators or size show a different version than
 * probed. Servers that send no validator on a response are trusted on the preconditions.
 */
export function assertSameVersion(
  expect: SourceInfo,
  headers: Dispatcher.ResponseData['headers'],
  size: number | null,
  where: string,
): void {
  const etag = header(headers, 'etag');
  const modified = header(headers, 'last-modified');
  const changed =
    (expect.etag !== null && etag !== undefined && opaque(etag) !== opaque(expect.etag)) ||
    (expect.lastModified !== null && modified !== undefined && modified !== expect.lastModified) ||
    (size !== null && size !== expect.size);
  if (changed) {
    throw new FreeLoaderError('SOURCE_CHANGED', `${where}: source changed during import`, {
      expected: { size: expect.size, etag: expect.etag, lastModified: expect.lastModified },
      found: { size, etag: etag ?? null, lastModified: modified ?? null },
    });
  }
}
