import fp from 'fastify-plugin';

/** A stop slower than this is logged as a warning with its steps (ms); faster ones at info. */
export const SLOW_STOP_MS = 3_000;

/** One timed step of a manager's stop. */
export interface CloseStep {
  step: string;
  /** When it began, ms after the stop began. */
  atMs: number;
  ms: number;
  /** It had not finished within its bound: the stop went on without it. */
  late?: boolean;
}

/**
 * How long each step of a manager's stop took. A manager holding 10,000 agents' job channels
 * took more than 60 s to stop with nothing saying where: each slow-suspect step (held waits
 * answered, last soft-state flush, singleton tasks, connections drained, pool ended, embedded
 * PostgreSQL stopped) is timed here, and the whole is logged once (see {@link summary}).
 *
 * @example
 *   steps.begin(); await steps.time('pool end', () => pool.end()); steps.summary().totalMs
 */
export class CloseSteps {
  private startedAt: number | undefined;
  readonly steps: CloseStep[] = [];
  /** Steps begun and not yet done, with when they began (ms after the stop began). */
  private readonly running = new Map<string, number>();

  /** The stop began (the first preClose hook); later calls keep the first time. */
  begin(): void {
    this.startedAt ??= performance.now();
  }

  /** Run one step and record its duration, failed or not. */
  async time<T>(step: string, fn: () => Promise<T> | T): Promise<T> {
    return this.run(step, fn, () => false);
  }

  /**
   * Run one step for at most `maxMs`: 'late' when it had not finished by then (it goes on,
   * unawaited; the stop does not wait for it), recorded with `late: true`.
   */
  async bounded(step: string, fn: () => Promise<unknown>, maxMs: number): Promise<'done' | 'late'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), maxMs)));
    try {
      return await this.run(
        step,
        () => Promise.race([fn().then(() => 'done' as const), late]),
        (outcome) => outcome === 'late',
      );
    } finally {
      clearTimeout(timer);
    }
  }

  /** What a stop that hangs is waiting for: the steps still running, by when they began. */
  pending(): Record<string, number> {
    return Object.fromEntries(this.running);
  }

  /** A step that began at `t0` (performance.now()) ended now; `late` if it was cut short. */
  record(step: string, t0: number, late = false): void {
    this.begin();
    const atMs = Math.round(t0 - this.startedAt!);
    const ms = Math.round(performance.now() - t0);
    this.steps.push(late ? { step, atMs, ms, late } : { step, atMs, ms });
  }

  /** Every step so far and the time since the stop began. */
  summary(): { totalMs: number; steps: CloseStep[] } {
    const totalMs = this.startedAt === undefined ? 0 : performance.now() - this.startedAt;
    return { totalMs: Math.round(totalMs), steps: [...this.steps] };
  }

  /**
   * Time `fn` as `step`, recording it with its own late flag: several bounded steps end in the
   * same tick (the singletons stop every task at once), so "the last step recorded" need not be
   * this one.
   */
  private async run<T>(step: string, fn: () => Promise<T> | T, isLate: (r: T) => boolean) {
    this.begin();
    const t0 = performance.now();
    this.running.set(step, Math.round(t0 - this.startedAt!));
    let late = false;
    try {
      const result = await fn();
      late = isLate(result);
      return result;
    } finally {
      this.running.delete(step);
      this.record(step, t0, late);
    }
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    closeSteps: CloseSteps;
  }
}

/**
 * `app.closeSteps`, begun by the first preClose hook (this plugin is registered early, and
 * preClose hooks run in registration order).
 */
export default fp(
  async (app) => {
    const steps = new CloseSteps();
    app.decorate('closeSteps', steps);
    app.addHook('preClose', async () => steps.begin());
  },
  { name: 'close-steps' },
);
