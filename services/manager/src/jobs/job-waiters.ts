import { randomBytes } from 'node:crypto';
import type { JobNotifier } from '../db/job-notices.js';

/**
 * Agents whose last announcement this manager remembers, past which the oldest half is forgotten
 * (a cursor older than what was forgotten makes its wait look in the database instead). About
 * 100 bytes an entry: 64 Ki agents is ~6 MiB, above the 10,000 agents issue 16 sizes for.
 */
const REMEMBERED_AGENTS_MAX = 65_536;

/** What a job channel wait answers: claim now or not, and the cursor to send with the next wait. */
export interface JobWaitAnswer {
  jobsPending: boolean;
  cursor: string;
}

/**
 * What this manager knows about announcements for an agent since `cursor`: `new` (claim),
 * `nothing`, or `unknown` (a cursor of another manager or of a restarted one, none at all, or
 * one older than what this manager still remembers: only the jobs table can tell).
 */
export type SinceCursor = 'new' | 'nothing' | 'unknown';

type Waiter = (woke: boolean) => void;

/**
 * The agents' open job channels on this manager (`GET /jobs/wait`), woken when a job is queued
 * for them, with no window in which a wake-up can be lost. Every announcement takes the next
 * number of a sequence; each wait answers with a cursor (this manager's epoch and the sequence
 * number when the answer was decided) which the agent sends back with its next wait. A wait
 * whose cursor predates an announcement for its agent answers at once, so a job announced while
 * the agent was between two waits, or whose wake-up answer never reached it (connection cut,
 * claim failed), is claimed on its next wait, however long that gap was. A cursor this manager
 * cannot judge (another manager's, a restarted one's, none) answers `unknown` and the route
 * asks the jobs table, taking the cursor *before* that query so a job committed during it is
 * still seen as new.
 *
 * @example
 *   const waiters = new JobWaiters();
 *   const c = waiters.cursor;
 *   waiters.notify(agentId);                         // agent is between waits
 *   await waiters.wait(agentId, c, 25_000);          // { jobsPending: true, cursor: … } at once
 */
export class JobWaiters implements JobNotifier {
  /** Changes at every start: cursors handed out by an earlier run of this manager mean nothing. */
  readonly epoch = randomBytes(6).toString('hex');
  private seq = 0;
  /** Sequence number of the last job any agent may claim. */
  private anySeq = 0;
  /** Agent id → sequence number of its last announcement, oldest first (re-inserted on update). */
  private readonly announced = new Map<string, number>();
  /** Announcements up to this number may have been forgotten. */
  private forgottenUpTo = 0;
  private readonly waiting = new Map<string, Set<Waiter>>();
  private closing = false;

  constructor(private readonly rememberMax = REMEMBERED_AGENTS_MAX) {}

  /** The cursor as of now: every announcement from here on is newer than it. */
  get cursor(): string {
    return `${this.epoch}.${this.seq}`;
  }

  /** Whether a job was announced for `agentId` after `cursor` (see {@link SinceCursor}). */
  since(agentId: string, cursor: string | undefined): SinceCursor {
    const seen = this.parse(cursor);
    if (seen === undefined || seen < this.forgottenUpTo) return 'unknown';
    const last = Math.max(this.announced.get(agentId) ?? 0, this.anySeq);
    return last > seen ? 'new' : 'nothing';
  }

  /**
   * Answer pending at once when a job was announced for `agentId` after `cursor` (or the cursor
   * cannot be judged), else when one is, or not pending after `timeoutMs`, on `signal` (the
   * client went away) or when the manager closes. A "nothing" answer carries the cursor of the
   * moment it was decided: nothing for this agent was announced up to it.
   */
  wait(
    agentId: string,
    cursor: string | undefined,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<JobWaitAnswer> {
    if (this.since(agentId, cursor) !== 'nothing') {
      return Promise.resolve({ jobsPending: true, cursor: this.cursor });
    }
    // Hand the agent's own cursor back: what was announced since still counts at its next wait.
    if (this.closing || signal?.aborted) {
      return Promise.resolve({ jobsPending: false, cursor: cursor! });
    }
    let set = this.waiting.get(agentId);
    if (!set) this.waiting.set(agentId, (set = new Set()));
    const waiters = set;
    return new Promise<JobWaitAnswer>((resolve) => {
      const done: Waiter = (woke) => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        waiters.delete(done);
        if (waiters.size === 0 && this.waiting.get(agentId) === waiters) {
          this.waiting.delete(agentId);
        }
        resolve({ jobsPending: woke, cursor: this.cursor });
      };
      const onAbort = (): void => done(false);
      const timer = setTimeout(() => done(false), timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      waiters.add(done);
    });
  }

  /** A job was queued for `agentId`; null (any agent may claim it) wakes every open wait. */
  notify(agentId: string | null): void {
    const seq = ++this.seq;
    if (agentId === null) {
      this.anySeq = seq;
      for (const set of [...this.waiting.values()]) for (const done of [...set]) done(true);
      return;
    }
    this.remember(agentId, seq);
    const set = this.waiting.get(agentId);
    if (set) for (const done of [...set]) done(true);
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

  /**
   * Whether the manager is closing: a wait answered now was cut short, not over, and its caller
   * answers 503 (see stopping-answer.ts) so that the agent goes to another manager at once.
   */
  get closed(): boolean {
    return this.closing;
  }

  /** Answer every open wait "nothing new" and take no more (the manager is closing). */
  close(): void {
    this.closing = true;
    for (const set of [...this.waiting.values()]) for (const done of [...set]) done(false);
  }

  private remember(agentId: string, seq: number): void {
    this.announced.delete(agentId);
    this.announced.set(agentId, seq);
    if (this.announced.size <= this.rememberMax) return;
    // Oldest first: forget the older half, and that anything up to its newest may be forgotten.
    let drop = this.announced.size - Math.floor(this.rememberMax / 2);
    for (const [id, s] of this.announced) {
      if (drop-- <= 0) break;
      this.announced.delete(id);
      this.forgottenUpTo = s;
    }
  }

  /** The sequence number in one of this run's cursors; undefined for any other string. */
  private parse(cursor: string | undefined): number | undefined {
    if (!cursor) return undefined;
    const dot = cursor.indexOf('.');
    if (dot < 0 || cursor.slice(0, dot) !== this.epoch) return undefined;
    const seen = Number(cursor.slice(dot + 1));
    return Number.isSafeInteger(seen) && seen >= 0 && seen <= this.seq ? seen : undefined;
  }
}
