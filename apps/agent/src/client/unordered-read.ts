import { donorsOfMorsel } from '@freeloader/protocol';
import type { DatasetReader, Morsel } from './dataset-reader.js';
import { PER_DONOR_IN_FLIGHT } from './dataset-reader.js';
import { ProgressBalance } from './progress-balance.js';
import { STEAL_SCAN, stealFor } from './work-steal.js';

/**
 * Workers per donor beyond its requests on the wire (`depth`, enforced by the request slots):
 * one verifies its morsel while the others' requests keep the donor's link busy. With only
 * `depth` workers, at W=8 on the LAN (load 12–19) each donor was idle 0.7–1.6 s of a 12–15 s
 * read with every worker verifying.
 */
export const OVERLAP_WORKERS = 1;

/** Morsels whose holders a read remembers for stealing (a few queue ends' worth). */
export const HOLDERS_MEMO = 4096;

/**
 * Read every morsel as fast as each donor can deliver, in no particular order, handing each to
 * `onMorsel` (which must release it). Each donor works through its own morsels independently, so
 * one that falls behind never stalls the others — the head-of-line blocking an in-order window
 * suffers. Use it when the output can be written at offsets (a file); stdout needs `morsels()`.
 *
 * Before each request a donor takes a queued morsel of a twin that would finish later than it
 * would with that morsel ({@link stealFor}), so queues stay even and the read ends with every
 * donor busy, whichever was slow: TCP splitting the client's link unevenly (W=12 on the LAN),
 * or a donor starved of CPU for a while.
 *
 * A dataset with a single copy of some morsels cannot be evened out that way: there donors are
 * kept at the same fraction of their share ({@link ProgressBalance}) instead. Lockstep was the
 * only balance before; at W=8 on the LAN (donors' links the bottleneck, 8 donor processes on 2
 * cores) it held every donor to the pace of whichever was briefly starved of CPU: donors had
 * requests in flight 6.5–7.4 s of a 9.1–10.4 s read.
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
  const balance = reader.replicated()
    ? undefined
    : new ProgressBalance(
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
  /** Morsels each donor's workers took and have not delivered yet. */
  const taken = new Map<string, number>();
  /** Wakes workers waiting for something to steal: a morsel was delivered or work moved. */
  let moved: { promise: Promise<void>; wake: () => void } | null = null;
  const notify = (): void => {
    moved?.wake();
    moved = null;
  };
  const changed = (): Promise<void> => {
    if (!moved) {
      let wake = (): void => undefined;
      const promise = new Promise<void>((r) => (wake = r));
      moved = { promise, wake };
    }
    return moved.promise;
  };
  /**
   * Each morsel's holders in the map, looked up once. A steal scans up to STEAL_SCAN morsels per
   * victim, most of them held by others (on a round-robin layout only neighbours share morsels),
   * and `candidates()` ranks every copy; with stealing the client's user CPU rose 0.1–0.2 s per
   * 512 MiB read at W=8 and 12 (d1eec75, load 17–19). Not measured since this memo.
   */
  const holders = new Map<number, string[]>();
  const holds = (d: string, i: number): boolean => {
    let h = holders.get(i);
    if (!h) {
      if (holders.size >= HOLDERS_MEMO) holders.clear(); // a huge dataset's scans stay bounded
      holders.set(i, (h = donorsOfMorsel(reader.map.extents, i)));
    }
    return h.includes(d);
  };
  const canServe = (d: string, i: number): boolean => {
    if (!holds(d, i)) return false;
    const copies = reader.candidates(i);
    return copies.includes(d) && reader.health(d) === reader.health(copies[0]!);
  };
  /** Take a twin's queued morsel when that evens the queues out ({@link stealFor}). */
  const steal = (donor: string, queue: number[]): void => {
    const got = stealFor(donor, {
      queues,
      canServe,
      rate: (d) => reader.donorRate(d) || undefined,
      inFlight: (d) => taken.get(d) ?? 0,
    });
    if (!got) return;
    queues.get(got.victim)!.splice(got.at, 1);
    queue.push(got.index);
    balance?.moved(got.victim, donor);
  };
  /**
   * `donor`'s queue is empty and nothing is worth taking now: true once something may be (a
   * morsel was delivered, work moved), false when no other queue holds anything it serves.
   */
  const mayGetWork = async (donor: string): Promise<boolean> => {
    const left = [...queues].some(
      ([d, q]) => d !== donor && q.slice(-STEAL_SCAN).some((i) => canServe(donor, i)),
    );
    if (left) await changed();
    return left;
  };
  const workers: Array<Promise<void>> = [];
  /** Outputs being written: the read ends once they are. */
  const writes = new Set<Promise<void>>();
  let failure: unknown;
  const fail = (e: unknown): void => {
    failure ??= e;
    controller.abort(e);
    notify();
  };

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
    balance?.rebalance([...queues].map(([donor, q]) => [donor, q.length]));
    // A donor whose workers ran out of work gets them back for its new share.
    for (const [donor, q] of queues) if (q.length > 0) start(donor, q, active.get(donor) ?? 0);
    notify();
  };
  const { trace } = reader;
  let workerIds = 0;
  const worker = async (donor: string, queue: number[]): Promise<void> => {
    active.set(donor, (active.get(donor) ?? 0) + 1);
    const id = workerIds++;
    try {
      while (failure === undefined) {
        const waited = performance.now();
        await balance?.turn(donor);
        const turned = performance.now();
        // A morsel leaves the queue only once its request can go out: one waiting for a request
        // slot could no longer be stolen by an idle twin (see RequestReservation).
        const reservation = donor ? await reader.reserveRequest(donor) : undefined;
        let morsel;
        let index: number;
        try {
          if (reader.healthVersion() !== dealtVersion) redeal();
          if (failure !== undefined) return;
          if (donor) steal(donor, queue);
          if (queue.length === 0) {
            if (reservation) reader.unreserve(reservation);
            if (donor && (await mayGetWork(donor))) continue;
            return;
          }
          index = queue.shift()!;
          trace?.mark('balance', index, waited, { donor, worker: id }, turned);
          trace?.mark('queue', index, turned, { donor });
          balance?.issued(donor);
          taken.set(donor, (taken.get(donor) ?? 0) + 1);
          try {
            morsel = await reader.readIntoSlot(index, controller.signal, reservation);
          } finally {
            taken.set(donor, taken.get(donor)! - 1);
            notify();
          }
        } finally {
          if (reservation) reader.unreserve(reservation);
        }
        balance?.completed(donor);
        // Not awaited: a consumer that writes asynchronously does so while this worker's next
        // request goes out (its slab slot is the bound); its failure fails the read.
        const written = performance.now();
        const write = onMorsel(morsel).then(
          () => void trace?.mark('write', index, written, { donor }),
          (e: unknown) => fail(e),
        );
        writes.add(write);
        void write.then(() => writes.delete(write));
      }
    } finally {
      active.set(donor, active.get(donor)! - 1);
    }
  };
  const start = (donor: string, queue: number[], running = 0): void => {
    for (let i = running; i < depth + OVERLAP_WORKERS; i++) {
      workers.push(worker(donor, queue).catch(fail));
    }
  };
  for (const [donor, q] of queues) start(donor, q);
  // Workers started by a re-deal join the list while earlier ones are awaited.
  for (let i = 0; i < workers.length; i++) await workers[i];
  while (writes.size > 0) await Promise.all([...writes]);
  if (failure !== undefined) {
    throw failure instanceof Error
      ? failure
      : new Error('a morsel worker failed', { cause: failure });
  }
}
