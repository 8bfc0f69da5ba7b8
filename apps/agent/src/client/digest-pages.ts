import { FreeLoaderError, MAP_HASH_PAGES_KEPT } from '@freeloader/protocol';

/** Digests of morsels [first, first + count), `width` bytes each (fewer when fewer are known). */
export type DigestRangeFetcher = (first: number, count: number) => Promise<Buffer>;

/** Where a map's digests of one kind start: what it carries, and how to get the rest. */
export interface DigestSeed {
  /** The digests the map carries, `width` bytes each, from morsel `first`. */
  bytes: Buffer;
  first: number;
  /** The map carries every digest: nothing to fetch. */
  complete: boolean;
}

/**
 * Fixed-width per-morsel digests (SHA-256 hashes, AES-GCM tags) of one dataset, fetched in pages
 * as a reader gets to them rather than all at once: a 1 TiB dataset has 1,048,576 morsels (64 MiB
 * of hashes and 32 MiB of tags as hex), and its first byte must not wait for them. The map
 * brings the first page; each further page of `page` morsels is fetched on first use, and the
 * next one as soon as the reader is halfway through a page, so a sequential reader rarely waits.
 * At most MAP_HASH_PAGES_KEPT pages stay in memory (the oldest fetched go first; a morsel read
 * again refetches its page).
 *
 * @example
 *   const tags = new DigestPages(16, 1_048_576, { bytes, first: 0, complete: false }, fetch, 4096);
 *   await tags.at(5000) // → morsel 5000's 16 bytes (page 1 fetched), or empty when unknown
 */
export class DigestPages {
  private readonly pages = new Map<number, Promise<Buffer>>();

  constructor(
    private readonly width: number,
    private readonly count: number,
    private readonly seed: DigestSeed,
    private readonly fetchRange: DigestRangeFetcher | undefined,
    private readonly page: number,
  ) {}

  /** Morsel `index`'s digest; empty when nobody knows it (past the end, or not recorded). */
  async at(index: number): Promise<Buffer> {
    const inSeed = index - this.seed.first;
    if (inSeed >= 0 && (inSeed + 1) * this.width <= this.seed.bytes.length) {
      return this.slice(this.seed.bytes, inSeed);
    }
    if (this.seed.complete || index >= this.count) return Buffer.alloc(0);
    if (!this.fetchRange) {
      throw new FreeLoaderError(
        'INTERNAL',
        `the map has digests of morsels from ${this.seed.first} only and no way to fetch more`,
      );
    }
    const p = Math.floor(index / this.page);
    const bytes = await this.pageOf(p);
    if ((index % this.page) * 2 >= this.page) void this.ahead(p + 1);
    return this.slice(bytes, index - p * this.page);
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

  /** The `i`-th digest of `bytes` (empty when `bytes` ends before it). */
  private slice(bytes: Buffer, i: number): Buffer {
    return bytes.subarray(i * this.width, (i + 1) * this.width);
  }
}
