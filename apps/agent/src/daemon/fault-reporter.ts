import { readFile } from 'node:fs/promises';
import type { Logger } from 'pino';
import { MAX_FAULTS_PER_REPORT, type AgentFault } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import { writeFileAtomic } from '../store/fs-layout.js';

/** Retry an unsent report this often (milliseconds). */
export const FAULT_RETRY_MS = 10_000;

/**
 * Tells the manager which morsels this donor dropped (scrub: bad hash; start-up: data missing or
 * short), in batches of at most MAX_FAULTS_PER_REPORT, through `POST /agents/me/faults`. Faults
 * not yet acknowledged are kept in a file, so a crash or an unreachable manager loses none: the
 * store already forgot those morsels, so this file is the only record of them.
 *
 * @example
 *   const faults = new FaultReporter({ manager, file: join(dir, 'faults-pending.json'), log });
 *   await faults.load();
 *   await faults.add([{ datasetId, morsel: 7, reason: 'corrupt', reportedBy: 'scrub' }]);
 */
export class FaultReporter {
  private pending: AgentFault[] = [];
  private sending: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ready = false;
  private closed = false;
  /** Writes of the pending file, one after another. */
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: {
      manager: Pick<ManagerClient, 'request'>;
      file: string;
      log: Pick<Logger, 'warn' | 'info'>;
    },
  ) {}

  /** Take up faults a previous run could not send (before {@link add}). */
  async load(): Promise<void> {
    this.pending = [...(await readPending(this.deps.file)), ...this.pending];
  }

  /** Faults waiting for the manager's acknowledgement. */
  get backlog(): number {
    return this.pending.length;
  }

  /** Queue faults (persisted at once) and send them as soon as the agent may talk to the manager. */
  async add(faults: readonly AgentFault[]): Promise<void> {
    if (faults.length === 0) return;
    this.pending.push(...faults);
    await this.persist();
    this.flushSoon();
  }

  /** The agent is enrolled and the manager answers: start (and keep) sending. */
  enable(): void {
    this.ready = true;
    this.flushSoon();
  }

  /** Send everything pending now; resolves when done or after a failed attempt (retried later). */
  flush(): Promise<void> {
    this.sending ??= this.send().finally(() => {
      this.sending = undefined;
    });
    return this.sending;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.sending;
  }

  private flushSoon(): void {
    if (!this.ready || this.closed || this.pending.length === 0) return;
    void this.flush();
  }

  private async send(): Promise<void> {
    while (this.ready && !this.closed && this.pending.length > 0) {
      const batch = this.pending.slice(0, MAX_FAULTS_PER_REPORT);
      try {
        const res = await this.deps.manager.request<{ recorded: number; ignored: number }>(
          'POST',
          '/agents/me/faults',
          { faults: batch },
        );
        this.deps.log.info(
          { ...res, sent: batch.length },
          'reported dropped morsels to the manager',
        );
      } catch (e) {
        this.deps.log.warn(
          { err: String(e), pending: this.pending.length },
          'fault report failed; will retry',
        );
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.flushSoon(), FAULT_RETRY_MS);
        this.timer.unref();
        return;
      }
      this.pending.splice(0, batch.length);
      await this.persist();
    }
  }

  private persist(): Promise<void> {
    const text = JSON.stringify(this.pending);
    this.saving = this.saving
      .catch(() => undefined)
      .then(() => writeFileAtomic(this.deps.file, text));
    return this.saving;
  }
}

async function readPending(file: string): Promise<AgentFault[]> {
  try {
    const parsed: unknown = JSON.parse(await readFile(file, 'utf8'));
    return Array.isArray(parsed) ? (parsed as AgentFault[]) : [];
  } catch {
    return [];
  }
}
