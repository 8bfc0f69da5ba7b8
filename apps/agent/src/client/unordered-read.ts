import type { DatasetReader, Morsel } from './dataset-reader.js';
import { PER_DONOR_IN_FLIGHT } from './dataset-reader.js';

/**
 * Read every morsel as fast as each donor can deliver, in no particular order, handing each to
 * `onMorsel` (which must release it). Each donor works through its own morsels independently, so
 * one that falls behind never stalls the others — the head-of-line blocking an in-order window
 * suffers. Use it when the output can be written at offsets (a file); stdout needs `morsels()`.
 *
 * @example await readUnordered(reader, async (m) => { await fh.write(m.data, 0, m.data.length, m.index * size); m.release(); });
 */
export async function readUnordered(
  reader: DatasetReader,
  onMorsel: (m: Morsel) => Promise<void>,
  depth = PER_DONOR_IN_FLIGHT,
): Promise<void> {
  const queues = new Map<string, number[]>();
  for (const i of reader.readOrder()) {
    const donor = reader.candidates(i)[0] ?? '';
    let q = queues.get(donor);
    if (!q) queues.set(donor, (q = []));
    q.push(i);
  }
  const controller = new AbortController();
  let failure: unknown;
  const worker = async (queue: number[]): Promise<void> => {
    while (queue.length > 0 && failure === undefined) {
      const index = queue.shift()!;
      const morsel = await reader.readIntoSlot(index, controller.signal);
      await onMorsel(morsel);
    }
  };
  const workers = [...queues.values()].flatMap((q) =>
    Array.from({ length: depth }, () => worker(q)),
  );
  await Promise.all(
    workers.map((w) =>
      w.catch((e: unknown) => {
        failure ??= e;
        controller.abort(e);
      }),
    ),
  );
  if (failure !== undefined) throw failure;
}
