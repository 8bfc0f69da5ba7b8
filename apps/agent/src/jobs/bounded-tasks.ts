/**
 * Run `task` over `items`, at most `limit` at once, in order of `items`. After the first failure
 * no new item starts, and the failure rejects only once every running task has settled: a job
 * that fails frees what it stored, and no write may land after that. `lane` (0 ≤ lane < limit)
 * names the worker running the item, for state one worker reuses (a buffer).
 *
 * @example await forEachBounded(indices, 4, async (index, lane) => store(index, slots[lane]));
 */
export async function forEachBounded<T>(
  items: readonly T[],
  limit: number,
  task: (item: T, lane: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failed = false;
  const worker = async (lane: number): Promise<void> => {
    while (next < items.length && !failed) {
      try {
        await task(items[next++]!, lane);
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  const settled = await Promise.allSettled(
    Array.from({ length: Math.min(limit, items.length) }, (_, lane) => worker(lane)),
  );
  const failure = settled.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) throw failure.reason;
}

/**
 * Tasks started one by one as their input arrives (a streamed source), at most `limit` running:
 * `add` waits for a free slot, so the producer slows down with the consumers and memory stays
 * bounded. The first failure is kept; `add` and `drain` throw it.
 *
 * @example
 *   const tasks = new BoundedTasks(8);
 *   for await (const chunk of stream) await tasks.add(() => send(chunk));
 *   await tasks.drain();
 */
export class BoundedTasks {
  private readonly running = new Set<Promise<void>>();
  private failure: { error: unknown } | undefined;

  constructor(private readonly limit: number) {}

  /** Start `task` once fewer than `limit` run; throws the first failure so far instead. */
  async add(task: () => Promise<void>): Promise<void> {
    while (this.running.size >= this.limit) await Promise.race(this.running);
    this.throwIfFailed();
    const p: Promise<void> = task()
      .catch((error: unknown) => {
        this.failure ??= { error };
      })
      .finally(() => this.running.delete(p));
    this.running.add(p);
  }

  /** Wait for every task started; throws the first failure. */
  async drain(): Promise<void> {
    while (this.running.size > 0) await Promise.all(this.running);
    this.throwIfFailed();
  }

  /** Wait for every task started, failed or not (cleanup before giving up). */
  async settle(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled(this.running);
  }

  private throwIfFailed(): void {
    if (this.failure) throw this.failure.error;
  }
}
