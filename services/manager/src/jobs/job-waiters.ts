import { JOB_WAIT_MS } from '@freeloader/protocol';
import type { JobNotifier } from '../db/job-notices.js';

/** Remembered wake-ups past which the next one sweeps out the expired (entries). */
const MISSED_SWEEP_AT = 4_096;

type Waiter = (woke: boolean) => void;

/**
 * The agents' open job channels on this manager (`GET /jobs/wait`), woken when a job is queued
 * for them. A wake-up for an agent with no open wait (it is between two waits) is remembered
 * for `missedTtlMs`, so its next wait answers at once instead of missing the job; an agent
 * that was away longer asks the database when it reconnects (`check`).
 *
 * @example
 *   const waiters = new JobWaiters();
 *   const woke = waiters.wait(agentId, 25_000); // pending
 *   waiters.notify(agentId);                    // woke resolves true
 */
export class JobWaiters implements JobNotifier {
  private readonly waiting = new Map<string, Set<Waiter>>();
  /** Agent id → until when (this.now() ms) its missed wake-up counts. */
  private readonly missed = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly missedTtlMs = JOB_WAIT_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Resolve true when a job is queued for `agentId` (or was, while it was between waits), false
   * after `timeoutMs`, on `signal` (the client went away) or when the manager closes.
   */
  wait(agentId: string, timeoutMs: number, signal?: AbortSignal): Promise<boolean> {
    if (this.closed || signal?.aborted) return Promise.resolve(false);
    const missedUntil = this.missed.get(agentId);
    if (missedUntil !== undefined) {
      this.missed.delete(agentId);
      if (missedUntil > this.now()) return Promise.resolve(true);
    }
    let set = this.waiting.get(agentId);
    if (!set) this.waiting.set(agentId, (set = new Set()));
    const waiters = set;
    return new Promise<boolean>((resolve) => {
      const done: Waiter = (woke) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiting.get(agentId) === waiters) {
          this.waiting.delete(agentId);
        }
        resolve(woke);
      };
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      waiters.add(done);
    });
  }

  /** A job was queued for `agentId`; null (any agent may claim it) wakes every open wait. */
  notify(agentId: string | null): void {
    if (agentId === null) {
      for (const set of [...this.waiting.values()]) for (const done of [...set]) done(true);
      return;
    }
    const set = this.waiting.get(agentId);
    if (set && set.size > 0) {
      for (const done of [...set]) done(true);
      return;
    }
    this.remember(agentId);
  }

  /** Whether `agentId` holds a wait now. */
  isWaiting(agentId: string): boolean {
    return (this.waiting.get(agentId)?.size ?? 0) > 0;
  }

  /** Open waits (agents connected to this manager's job channel, give or take a reconnect). */
  get open(): number {
    let n = 0;
    for (const set of this.waiting.values()) n += set.size;
    return n;
  }

  /** Answer every open wait "nothing new" and take no more (the manager is closing). */
  close(): void {
    this.closed = true;
    for (const set of [...this.waiting.values()]) for (const done of [...set]) done(false);
    this.missed.clear();
  }

  private remember(agentId: string): void {
    const now = this.now();
    if (this.missed.size >= MISSED_SWEEP_AT) {
      for (const [id, until] of this.missed) if (until <= now) this.missed.delete(id);
    }
    this.missed.set(agentId, now + this.missedTtlMs);
  }
}
