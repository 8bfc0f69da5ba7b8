import {
  FreeLoaderError,
  MAP_HASH_PAGE_MORSELS,
  MAP_HASH_PAGES_KEPT,
  morselCount,
  type DatasetMap,
} from '@freeloader/protocol';

/** SHA-256 digest length (bytes). */
const DIGEST_BYTES = 32;

/** Hashes of morsels [first, first + count), 32 bytes each (fewer when the manager knows fewer). */
export type HashRangeFetcher = (first: number, count: number) => Promise<Buffer>;

/**
 * The expected hash of each morsel of a read, fetched in pages as the reader gets to them rather
 * than all at once: a 1 TiB dataset has 1,048,576 hashes (64 MiB as hex), and its first byte
 * must not wait for them. The map brings the first page (`hashesFirst` set); each further page
 * of `page` morsels is fetched on first use, and the next one as soon as the reader is halfway
 * through a page, so a sequential reader rarely waits. At most MAP_HASH_PAGES_KEPT pages stay in
 * memory (the oldest fetched go first; a morsel read again refetches its page).
 *
 * A map without `hashesFirst` carries every hash and needs no fetcher (the old, whole map).
 */
export class MapHashes {
  private readonly seedFirst: number;
  private readonly seed: Buffer;
  private readonly complete: boolean;
  private readonly count: number;
  private readonly pages = new Map<number, Promise<Buffer>>();

  constructor(
    map: Pick<DatasetMap, 'dataset' | 'hashes' | 'hashesFirst'>,
    private readonly fetchRange?: HashRangeFetcher,
    private readonly page = MAP_HASH_PAGE_MORSELS,
  ) {
    this.seedFirst = map.hashesFirst ?? 0;
    this.seed = Buffer.from(map.hashes, 'hex');
    this.complete = map.hashesFirst === undefined;
    this.count = morselCount(map.dataset.sizeBytes, map.dataset.morselSize);
  }

  /**
   * Morsel `index`'s SHA-256 as hex; '' when the manager knows none for it (an uncached suffix,
   * verified by its patching nodes instead).
   */
  async expected(index: number): Promise<string> {
    const inSeed = index - this.seedFirst;
    if (inSeed >= 0 && (inSeed + 1) * DIGEST_BYTES <= this.seed.length) {
      return hexAt(this.seed, inSeed);
    }
    if (this.complete || index >= this.count) return '';
    if (!this.fetchRange) {
      throw new FreeLoaderError(
        'INTERNAL',
        `the map has hashes of morsels from ${this.seedFirst} only and no way to fetch more`,
      );
    }
    const p = Math.floor(index / this.page);
    const bytes = await this.pageOf(p);
    if ((index % this.page) * 2 >= this.page) void this.ahead(p + 1);
    return hexAt(bytes, index - p * this.page);
  }

  /** Page `p`, fetched once; a failed fetch is forgotten so the next use tries again. */
  private pageOf(p: number): Promise<Buffer> {
    let pending = this.pages.get(p);
    if (!pending) {
      const first = p * this.page;
      pending = this.fetchRange!(first, Math.min(this.page, this.count - first));
      pending.catch(() => this.pages.delete(p));
      this.pages.set(p, pending);
      for (const old of this.pages.keys()) {
        if (this.pages.size <= MAP_HASH_PAGES_KEPT) break;
        if (old !== p) this.pages.delete(old);
      }
    }
    return pending;
  }

  /** Fetch page `p` before the reader needs it (errors surface when it does). */
  private async ahead(p: number): Promise<void> {
    if (p * this.page >= this.count || this.pages.has(p)) return;
    await this.pageOf(p).catch(() => undefined);
  }
}

/** The `i`-th digest of `bytes` as hex ('' when `bytes` ends before it). */
function hexAt(bytes: Buffer, i: number): string {
  return bytes.subarray(i * DIGEST_BYTES, (i + 1) * DIGEST_BYTES).toString('hex');
}
