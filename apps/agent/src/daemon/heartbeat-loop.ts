import type { Logger } from 'pino';
import { isFreeLoaderError, type Heartbeat, type HeartbeatResponse } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import type { AgentStatus } from './agent-status.js';
import { backoffDelay } from '../backoff.js';

/** Delay bounds while the manager is unreachable (milliseconds). */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;

export interface HeartbeatDeps {
  manager: Pick<ManagerClient, 'heartbeat'>;
  /** The next heartbeat's body (usage, rates, governor and diagnostics fields). */
  body(): Heartbeat;
  /**
   * The manager answered: runs before the next beat is scheduled (reconcile, take jobs). A
   * rejection counts as a failed beat.
   */
  onAnswer(res: HeartbeatResponse): Promise<void>;
  setStatus(status: AgentStatus): void;
  /** Interval until the manager names one (the protocol default, or the enrollment answer). */
  intervalMs: number;
  /** A fixed interval (tests) that wins over what the manager says. */
  fixedIntervalMs?: number;
  log: Logger;
}

/**
 * The daemon's pulse to the manager: one heartbeat per interval while it answers, backing off
 * while it does not (the agent keeps serving: offline), and slowly while it refuses this agent
 * (revoked). The manager's answer sets the interval: a restarted agent never enrolls again, so
 * the heartbeat answer is where it learns it.
 */
export class HeartbeatLoop {
  private timer: NodeJS.Timeout | undefined;
  private failures = 0;
  private stopped = false;
  private intervalMs: number;

  constructor(private readonly deps: HeartbeatDeps) {
    this.intervalMs = deps.intervalMs;
  }

  /** The manager named an interval (at enrollment); a fixed one still wins. */
  useInterval(intervalMs: number): void {
    this.intervalMs = this.deps.fixedIntervalMs ?? intervalMs;
  }

  /** Beat after `delayMs` (0: now), replacing any beat already scheduled. */
  beatSoon(delayMs: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.beat(), delayMs);
    this.timer.unref?.();
  }

  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
  }

  private async beat(): Promise<void> {
    try {
      const res = await this.deps.manager.heartbeat(this.deps.body());
      this.failures = 0;
      if (res.heartbeatIntervalMs > 0) this.useInterval(res.heartbeatIntervalMs);
      this.deps.setStatus('online');
      await this.deps.onAnswer(res);
      this.beatSoon(this.intervalMs);
    } catch (e) {
      if (isFreeLoaderError(e) && (e.code === 'AGENT_REVOKED' || e.status === 401)) {
        this.deps.setStatus('revoked');
        this.deps.log.error(
          { err: e.message },
          'manager refused this agent; re-enroll with a new token',
        );
        this.beatSoon(RETRY_MAX_MS);
        return;
      }
      this.deps.setStatus('offline');
      const delay = backoffDelay(this.failures++, RETRY_BASE_MS, RETRY_MAX_MS);
      this.deps.log.warn({ err: errText(e), retryInMs: delay }, 'heartbeat failed; still serving');
      this.beatSoon(delay);
    }
  }
}

function errText(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
