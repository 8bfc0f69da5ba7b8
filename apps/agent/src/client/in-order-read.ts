import type { DatasetReader, Morsel } from './dataset-reader.js';

/**
 * Morsels [from, to) of `reader` in order, each in a slab slot the consumer must `release()`
 * once it has used the bytes. At most `window` morsels are in flight or buffered (the slab
 * bounds memory), so fast donors run ahead while a slow one catches up. For outputs that must
 * be written in order (stdout, a pipe); a file takes {@link readUnordered}, which no slow donor
 * holds up.
 *
 * @example for await (const m of readInOrder(reader)) { out.write(m.data); m.release(); }
 */
export async function* readInOrder(
  reader: Pick<DatasetReader, 'count' | 'defaultWindow' | 'readIntoSlot'>,
  from = 0,
  to = reader.count,
  window = reader.defaultWindow(),
  signal?: AbortSignal,
): AsyncGenerator<Morsel> {
  const pending = new Map<number, Promise<Morsel>>();
  let launched = from;
  const fill = (next: number): void => {
    while (launched < to && launched < next + window) {
      const p = reader.readIntoSlot(launched, signal);
      p.catch(() => undefined); // observed when its turn comes
      pending.set(launched++, p);
    }
  };
  try {
    for (let next = from; next < to; next++) {
      fill(next);
      const morsel = await pending.get(next)!;
      pending.delete(next);
      yield morsel;
    }
  } finally {
    // An abandoned read gives its slots back as the outstanding fetches land.
    for (const p of pending.values())
      void p.then(
        (m) => m.release(),
        () => undefined,
      );
    pending.clear();
  }
}
