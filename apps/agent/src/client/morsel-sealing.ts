import { dataKeyOf, morselTagOf, sealMorsel, type DatasetMap } from '@freeloader/protocol';
import type { HashPool, Seal, SharedMemory } from './hash-pool.js';

/**
 * How a reader handles an encrypted dataset's morsels (the map carries its key and tags): donors
 * hold ciphertext, checked against the map's SHA-256 of the stored bytes and then opened in place
 * (AES-GCM tag check) on the hash workers; bytes read from the source are sealed first, so they
 * are checked against the same hash. Undefined for a dataset stored in clear.
 *
 * @example
 *   const sealing = MorselSealing.of(map); // undefined when map.dataKey is absent
 *   await sealing?.open(pool, slab, slot.offset, length, index);
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

  /** Open verified morsel `index` (`length` bytes of `shared` at `offset`) in place. */
  open(
    pool: HashPool,
    shared: SharedMemory,
    offset: number,
    length: number,
    index: number,
  ): Promise<void> {
    const seal: Seal = {
      key: this.key,
      datasetId: this.datasetId,
      index,
      tag: morselTagOf(this.tags, index),
    };
    return pool.openSlot(shared, offset, length, seal);
  }
}
