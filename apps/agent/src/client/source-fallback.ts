import type { DatasetMap } from '@freeloader/protocol';
import { openSource, type Source } from '@freeloader/sources';
import { OWN_READS_POLICY } from './own-reads-policy.js';

/**
 * The source is the durable copy: when no donor can deliver a morsel, read it by Range from the
 * dataset's URI, pinned to the version that was imported (ETag / Last-Modified).
 */
export function sourceFallback(map: DatasetMap): {
  read?: (start: number, end: number) => Promise<Buffer>;
  close: () => Promise<void>;
} {
  const { sourceUri, sizeBytes, etag, lastModified } = map.dataset;
  if (!sourceUri) return { close: async () => undefined };
  let source: Source | undefined;
  return {
    read: (start, end) => {
      source ??= openSource(sourceUri, { connections: 2, policy: OWN_READS_POLICY });
      return source.readRange(start, end, {
        uri: sourceUri,
        size: sizeBytes,
        etag,
        lastModified,
        acceptsRanges: true,
      });
    },
    close: async () => {
      await source?.close();
    },
  };
}
