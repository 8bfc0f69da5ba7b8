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
 * A donor whose health changes in the read (it failed, stalled or was dropped) has its queue —
 * and everyone's, so the twins that take its morsels hand some of theirs on — dealt again over
 * the healthy copies. Left in place, its morsels trickled to their other copies `depth` at a
 * time, and the balance held every other donor to that trickle's pace.
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
  const order = new Map(reader.readOrder().map((m, i) => [m, i]));
  /**
   * Every donor's health as of the last deal: any change (a failure, a drop, or either's end)
   * deals again, a twin's as much as the worker's own donor's.
   */
  let dealtVersion = reader.healthVersion();
  const active = new Map<string, number>();
  const workers: Array<Promise<void>> = [];
  let failure: unknown;

  const redeal = (): void => {
    const rest = [...queues.values()]
      .flatMap((q) => q.splice(0))
      .sort((a, b) => order.get(a)! - order.get(b)!);
    for (const [donor, q] of reader.spread(rest)) {
      const mine = queues.get(donor);
      if (mine) mine.push(...q);
      else queues.set(donor, q);
    }
    dealtVersion = reader.healthVersion();
    balance.rebalance([...queues].map(([donor, q]) => [donor, q.length]));
    // A donor whose workers ran out of work gets them back for its new share.
    for (const [donor, q] of queues) if (q.length > 0) start(donor, q, active.get(donor) ?? 0);
  };
  const { trace } = reader;
  let workerIds = 0;
  const worker = async (donor: string, queue: number[]): Promise<void> => {
    active.set(donor, (active.get(donor) ?? 0) + 1);
    const id = workerIds++;
    try {
      while (queue.length > 0 && failure === undefined) {
        const waited = performance.now();
        await balance.turn(donor);
        if (reader.healthVersion() !== dealtVersion) redeal();
        if (failure !== undefined || queue.length === 0) return;
        const index = queue.shift()!;
        trace?.mark('balance', index, waited, { donor, worker: id });
        balance.issued(donor);
        const morsel = await reader.readIntoSlot(index, controller.signal, donor || undefined);
        balance.completed(donor);
        const written = performance.now();
        await onMorsel(morsel);
        trace?.mark('write', index, written, { donor, worker: id });
      }
    } finally {
      active.set(donor, active.get(donor)! - 1);
    }
  };
  const start = (donor: string, queue: number[], running = 0): void => {
    for (let i = running; i < depth; i++) {
      workers.push(
        worker(donor, queue).catch((e: unknown) => {
          failure ??= e;
          controller.abort(e);
        }),
      );
    }
  };
  for (const [donor, q] of queues) start(donor, q);
  // Workers started by a re-deal join the list while earlier ones are awaited.
  for (let i = 0; i < workers.length; i++) await workers[i];
  if (failure !== undefined) {
    throw failure instanceof Error
      ? failure
      : new Error('a morsel worker failed', { cause: failure });
  }
}
