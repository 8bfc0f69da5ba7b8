import { LaneBuffers } from './lane-buffers.js';

/** What a repair job holds while it receives: its turn, and the lane buffers that go with it. */
export interface ReceiveTurn {
  /** One morsel buffer per lane, shared by the jobs that take turns (see ReceiveSlot). */
  buffers(morselSize: number): LaneBuffers;
  /** End this turn (idempotent): the next job waiting starts receiving. */
  release(): void;
}

/**
 * Repair jobs on one donor receive one at a time, in the order they asked: b caps the donor's
 * repair download, not each job's, and the manager may queue a job behind a running one (a
 * repair channel, services/manager/src/repair/channels.ts). The next job starts when the last
 * morsel of the previous one is stored, while that one still commits. The lane buffers pass
 * from job to job: a job's own would be garbage V8 collects late (see LaneBuffers), and two
 * jobs back to back would carry both sets. They are dropped when no job is waiting.
 *
 * @example
 *   const turn = await slot.acquire(signal);
 *   try { await receive(turn.buffers(MiB)); } finally { turn.release(); }
 */
export class ReceiveSlot {
  private tail: Promise<void> = Promise.resolve();
  private holders = 0;
  private lanes: LaneBuffers | undefined;

  /**
   * Wait for this donor's turn to receive.
   *
   * @throws the signal's reason when `signal` aborts while waiting (the turn is given up).
   */
  async acquire(signal?: AbortSignal): Promise<ReceiveTurn> {
    let done!: () => void;
    const mine = new Promise<void>((resolve) => (done = resolve));
    const previous = this.tail;
    // The next job waits for the previous one too, even when this one gives up while waiting.
    this.tail = previous.then(() => mine);
    this.holders++;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      if (--this.holders === 0) this.lanes = undefined;
      done();
    };
    try {
      await abortable(previous, signal);
    } catch (e) {
      release();
      throw e;
    }
    return {
      buffers: (size) => {
        if (this.lanes?.size !== size) this.lanes = new LaneBuffers(size);
        return this.lanes;
      },
      release,
    };
  }

  /** Jobs holding or waiting for a turn. */
  get waiting(): number {
    return this.holders;
  }
}

/** `p` (which never rejects: turns only end), or the signal's reason once it aborts. */
function abortable(p: Promise<void>, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return p;
  signal.throwIfAborted();
  return new Promise<void>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    void p.then(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    });
  });
}
