import { FreeLoaderError, dataKeyOf, plainMatchesTag, type DatasetMap } from '@freeloader/protocol';
import type { HashPool, Seal, SharedMemory } from './hash-pool.js';
import { openInPlace, sealInPlace } from '../native/morsel-cipher.js';

/** Morsel `index`'s AES-GCM tag (HASH_MISMATCH when none is known). */
export type TagOf = (index: number) => Promise<Buffer>;

/**
 * How a reader handles an encrypted dataset's morsels (the map carries its key and tags). Donors
 * hold ciphertext; the reader's check of a morsel is its AES-GCM tag, checked while the morsel is
 * opened in place on the hash workers. The tag authenticates the very bytes the map's SHA-256
 * covers (a flipped byte fails both), under a key donors never hold, so the client does not hash
 * as well: that second pass over every byte cost 1.42× the CPU of a read in clear (bench
 * loopback-get); the SHA-256 stays the reference donors check without the key (import, repair,
 * scrub). Bytes read from the source are sealed first, then checked the same way. Undefined for
 * a dataset stored in clear. Tags come from `tagOf`: a large dataset's map carries only its
 * first page of them, the rest are fetched in pages ({@link MapHashes.tag}).
 *
 * @example
 *   const sealing = MorselSealing.of(map, (i) => mapHashes.tag(i)); // undefined in clear
 *   const ok = await sealing?.open(pool, slab, slot.offset, length, index);
 */
export class MorselSealing {
  private constructor(
    private readonly key: Buffer,
    private readonly datasetId: string,
    private readonly tagOf: TagOf,
  ) {}

  static of(map: DatasetMap, tagOf: TagOf): MorselSealing | undefined {
    if (map.dataKey === undefined) return undefined;
    return new MorselSealing(dataKeyOf(map.dataKey), map.dataset.id, tagOf);
  }

  /** Seal plain bytes of morsel `index` (read from the source) in place, as donors store them. */
  seal(index: number, data: Buffer): void {
    sealInPlace(this.key, this.datasetId, index, data);
  }

  /**
   * Open sealed morsel `index` (`length` bytes of `shared` at `offset`) in place on a worker:
   * true once it is plain text, false when its tag does not match (the bytes are then unusable: the
   * reader fetches the morsel from another copy).
   */
  async open(
    pool: HashPool,
    shared: SharedMemory,
    offset: number,
    length: number,
    index: number,
  ): Promise<boolean> {
    return pool.openSlot(shared, offset, length, await this.sealOf(index));
  }

  /** {@link open} on this thread, for a buffer of its own (a hedge's backup read). */
  async openHere(index: number, data: Buffer): Promise<boolean> {
    const { key, datasetId, tag } = await this.sealOf(index);
    return openInPlace(key, datasetId, index, data, tag);
  }

  /**
   * Morsel `index`'s tag when the manager holds one: every morsel ever stored has one; the
   * uncached suffix of a dataset imported as a prefix has none (zeros, or no page entry) until
   * an extension stores it.
   */
  async knownTag(index: number): Promise<Buffer | undefined> {
    let tag: Buffer;
    try {
      tag = await this.tagOf(index);
    } catch (e) {
      if (e instanceof FreeLoaderError && e.code === 'HASH_MISMATCH') return undefined;
      throw e;
    }
    return tag.some((b) => b !== 0) ? tag : undefined;
  }

  /** Whether the manager holds a tag for morsel `index` ({@link knownTag}). */
  async hasTag(index: number): Promise<boolean> {
    return (await this.knownTag(index)) !== undefined;
  }

  /**
   * Whether plain bytes `data` (a patching node's download of the source) are morsel `index` as
   * it was sealed: its tag recomputed matches the map's. False when the map has no tag for it.
   */
  async matchesPlain(index: number, data: Buffer): Promise<boolean> {
    const tag = await this.knownTag(index);
    return tag !== undefined && plainMatchesTag(this.key, this.datasetId, index, data, tag);
  }

  private async sealOf(index: number): Promise<Seal> {
    return { key: this.key, datasetId: this.datasetId, index, tag: await this.tagOf(index) };
  }
}
