import { setTimeout as delay } from 'node:timers/promises';
import { PACE_SLICE_BYTES } from './paced-stream.js';
import type { TokenBucket } from './token-bucket.js';

/** Waits `ms` (abortable); injectable so tests drive a fake clock instead of timers. */
export type Sleep = (ms: number, signal?: AbortSignal) => Promise<void>;

const realSleep: Sleep = (ms, signal) => delay(ms, undefined, signal ? { signal } : {});

/**
 * Admission for the agent's own background traffic — imports pulling from a source, patch
 * downloads, relocation pushes — through the serving token bucket: the owner notices the sum
 * of what the agent moves, not which kind it was. A transfer asks before moving its bytes;
 * while donating is paused it waits (it does not fail: the job goes on after the pause), and
 * otherwise it waits its turn in the bucket, slice by slice, so serving interleaves with it.
 *
 * @example
 *   const gate = new TransferGate(bucket, () => governor.decision.state === 'paused');
 *   await gate.admit(morselBytes, signal); // then fetch/push the morsel
 *   // …and gate.wake() whenever the governor's decision changed.
 */
export class TransferGate {
  private readonly waiters = new Set<() => void>();

  constructor(
    private readonly bucket: TokenBucket,
    private readonly paused: () => boolean,
    private readonly sleep: Sleep = realSleep,
  ) {}

  /** Transfers waiting out a pause right now. */
  get waiting(): number {
    return this.waiters.size;
  }

  /**
   * Resolve when `bytes` may move: after any pause has ended and the bucket has room for them
   * at its current rate. Rejects only when `signal` aborts (the job was cancelled or the agent
   * is stopping).
   */
  async admit(bytes: number, signal?: AbortSignal): Promise<void> {
    let left = Math.max(0, bytes);
    do {
      await this.whileNotPaused(signal);
      const slice = Math.min(left, PACE_SLICE_BYTES);
      left -= slice;
      const waitMs = slice > 0 ? this.bucket.reserve(slice) : 0;
      if (waitMs >= 1) await this.sleep(waitMs, signal);
    } while (left > 0);
    signal?.throwIfAborted();
  }

  /** The governor decided again: let transfers held by a pause that ended go on. */
  wake(): void {
    if (this.paused()) return;
    for (const w of [...this.waiters]) w();
  }

  private async whileNotPaused(signal?: AbortSignal): Promise<void> {
    while (this.paused()) {
      signal?.throwIfAborted();
      await new Promise<void>((resolve) => {
        const done = (): void => {
          this.waiters.delete(done);
          signal?.removeEventListener('abort', done);
          resolve();
        };
        this.waiters.add(done);
        signal?.addEventListener('abort', done, { once: true });
      });
    }
    signal?.throwIfAborted();
  }
}
