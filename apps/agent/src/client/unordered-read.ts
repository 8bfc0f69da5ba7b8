import type { DatasetReader, Morsel } from './dataset-reader.js';
import { PER_DONOR_IN_FLIGHT } from './dataset-reader.js';
import { ProgressBalance } from './progress-balance.js';

/**
 * Read every morsel as fast as each donor can deliver, in no particular order, handing each to
 * `onMorsel` (which must release it). Each donor works through its own morsels independently, so
 * one that falls behind never stalls the others — the head-of-line blocking an in-order window
 * suffers. Use it when the output can be written at offsets (a file); stdout needs `morsels()`.
 *
 * Donors are kept at the same fraction of their share ({@link ProgressBalance}): when they
 * together outrun the client's link, TCP splits that link unevenly, and without balancing the
 * read ends with the unlucky donors' tails alone on an otherwise idle link.
 *
 * @example await readUnordered(reader, async (m) => { await fh.write(m.data, 0, m.data.length, m.index * size); m.release(); });
 */
export async function readUnordered(
  reader: DatasetReader,
  onMorsel: (m: Morsel) => Promise<void>,
  depth = PER_DONOR_IN_FLIGHT,
): Promise<void> {
  // Every live copy serves: each morsel is queued at the copy that would finish it first.
  const queues = reader.spread();
  const controller = new AbortController();
  const balance = new ProgressBalance(
    [...queues].map(([donor, q]) => [donor, q.length]),
    depth,
    controller.signal,
  );
  let failure: unknown;
  const worker = async (donor: string, queue: number[]): Promise<void> => {
    while (queue.length > 0 && failure === undefined) {
      await balance.turn(donor);
      if (failure !== undefined || queue.length === 0) return;
      const index = queue.shift()!;
      balance.issued(donor);
      const morsel = await reader.readIntoSlot(index, controller.signal, donor || undefined);
      balance.completed(donor);
      await onMorsel(morsel);
    }
  };
  const workers = [...queues].flatMap(([donor, q]) =>
    Array.from({ length: depth }, () => worker(donor, q)),
  );
  await Promise.all(
    workers.map((w) =>
      w.catch((e: unknown) => {
        failure ??= e;
        controller.abort(e);
      }),
    ),
  );
  if (failure !== undefined) {
    throw failure instanceof Error
      ? failure
      : new Error('a morsel worker failed', { cause: failure });
  }
}
