import {
  FreeLoaderError,
  MAP_HASH_PAGE_MORSELS,
  MORSEL_TAG_BYTES,
  morselCount,
  type DatasetMap,
} from '@freeloader/protocol';
import { DigestPages, type DigestRangeFetcher } from './digest-pages.js';

/** SHA-256 digest length (bytes). */
const DIGEST_BYTES = 32;

/** Hashes of morsels [first, first + count), 32 bytes each (fewer when the manager knows fewer). */
export type HashRangeFetcher = DigestRangeFetcher;

/**
 * The expected hash of each morsel of a read, and an encrypted dataset's AES-GCM tag, fetched in
 * pages as the reader gets to them rather than all at once (see {@link DigestPages}): a 1 TiB
 * dataset has 1,048,576 hashes (64 MiB as hex) and as many tags (32 MiB as hex), and its first
 * byte must not wait for them. The map brings the first page of each (`hashesFirst` set).
 *
 * A map without `hashesFirst` carries every hash and tag and needs no fetcher (the old, whole map).
 *
 * @example
 *   const h = new MapHashes(map, fetchHashes, MAP_HASH_PAGE_MORSELS, fetchTags);
 *   await h.expected(5000) // → hex SHA-256 of morsel 5000 ('' when unknown)
 *   await h.tag(5000)      // → its 16-byte AES-GCM tag (HASH_MISMATCH when unknown)
 */
export class MapHashes {
  private readonly hashes: DigestPages;
  private readonly tags: DigestPages;

  constructor(
    map: Pick<DatasetMap, 'dataset' | 'hashes' | 'hashesFirst' | 'tags'>,
    fetchRange?: HashRangeFetcher,
    page = MAP_HASH_PAGE_MORSELS,
    fetchTags?: DigestRangeFetcher,
  ) {
    const first = map.hashesFirst ?? 0;
    const complete = map.hashesFirst === undefined;
    const count = morselCount(map.dataset.sizeBytes, map.dataset.morselSize);
    const seed = (hex: string) => ({ bytes: Buffer.from(hex, 'hex'), first, complete });
    this.hashes = new DigestPages(DIGEST_BYTES, count, seed(map.hashes), fetchRange, page);
    this.tags = new DigestPages(MORSEL_TAG_BYTES, count, seed(map.tags ?? ''), fetchTags, page);
  }

  /**
   * Morsel `index`'s SHA-256 as hex; '' when the manager knows none for it (an uncached suffix,
   * verified by its patching nodes instead).
   */
  async expected(index: number): Promise<string> {
    return (await this.hashes.at(index)).toString('hex');
  }

  /** Morsel `index`'s AES-GCM tag (encrypted datasets); HASH_MISMATCH when none is known. */
  async tag(index: number): Promise<Buffer> {
    const tag = await this.tags.at(index);
    if (tag.length !== MORSEL_TAG_BYTES) {
      throw new FreeLoaderError('HASH_MISMATCH', `no AES-GCM tag known for morsel ${index}`);
    }
    return tag;
  }
}
