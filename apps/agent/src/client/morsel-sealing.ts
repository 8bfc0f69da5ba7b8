import {
  dataKeyOf,
  hasMorselTag,
  morselTagOf,
  openMorsel,
  plainMatchesTag,
  sealMorsel,
  type DatasetMap,
} from '@freeloader/protocol';
import type { HashPool, Seal, SharedMemory } from './hash-pool.js';

/**
 * How a reader handles an encrypted dataset's morsels (the map carries its key and tags). Donors
 * hold ciphertext; the reader's check of a morsel is its AES-GCM tag, checked while the morsel is
 * opened in place on the hash workers. The tag authenticates the very bytes the map's SHA-256
 * covers (a flipped byte fails both), under a key donors never hold, so the client does not hash
 * as well: that second pass over every byte cost 1.42× the CPU of a read in clear (bench
 * loopback-get); the SHA-256 stays the reference donors check without the key (import, repair,
 * scrub). Bytes read from the source are sealed first, then checked the same way. Undefined for
 * a dataset stored in clear.
 *
 * @example
 *   const sealing = MorselSealing.of(map); // undefined when map.dataKey is absent
 *   const ok = await sealing?.open(pool, slab, slot.offset, length, index);
 */
export class MorselSealing {
  private constructor(
    private readonly key: Buffer,
    private readonly datasetId: string,
    private readonly tags: string,
  ) {}

  static of(map: DatasetMap): MorselSealing | undefined {
    if (map.dataKey === undefined) return undefined;
    return new MorselSealing(dataKeyOf(map.dataKey), map.dataset.id, map.tags ?? '');
  }

  /** Seal plain bytes of morsel `index` (read from the source) in place, as donors store them. */
  seal(index: number, data: Buffer): void {
    sealMorsel(this.key, this.datasetId, index, data);
  }

  /**
   * Open sealed morsel `index` (`length` bytes of `shared` at `offset`) in place on a worker:
   * true once it is plain text, false when its tag does not match (the bytes stay as they were).
   */
  open(
    pool: HashPool,
    shared: SharedMemory,
    offset: number,
    length: number,
    index: number,
  ): Promise<boolean> {
    return pool.openSlot(shared, offset, length, this.sealOf(index));
  }

  /** {@link open} on this thread, for a buffer of its own (a hedge's backup read). */
  openHere(index: number, data: Buffer): boolean {
    const { key, datasetId, tag } = this.sealOf(index);
    return openMorsel(key, datasetId, index, data, tag);
  }

  /**
   * Whether the manager holds a tag for morsel `index`: every morsel ever stored has one; the
   * uncached suffix of a dataset imported as a prefix has none until an extension stores it.
   */
  hasTag(index: number): boolean {
    return hasMorselTag(this.tags, index);
  }

  /**
   * Whether plain bytes `data` (a patching node's download of the source) are morsel `index` as
   * it was sealed: its tag recomputed matches the map's. False when the map has no tag for it.
   */
  matchesPlain(index: number, data: Buffer): boolean {
    if (!this.hasTag(index)) return false;
    const { key, datasetId, tag } = this.sealOf(index);
    return plainMatchesTag(key, datasetId, index, data, tag);
  }

  private sealOf(index: number): Seal {
    return { key: this.key, datasetId: this.datasetId, index, tag: morselTagOf(this.tags, index) };
  }
}
