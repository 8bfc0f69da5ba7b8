import type { QuotaChangeResponse } from '@freeloader/protocol';

/** Progress of moving data off this donor after its quota was lowered. */
export interface RelocationProgress {
  state: 'idle' | 'relocating' | 'done' | 'failed';
  /** Bytes to move / moved in the jobs this agent runs. */
  totalBytes: number;
  doneBytes: number;
  /** Datasets evicted (their source still answers) instead of moved. */
  evicted: number;
  /** Excess nobody could take yet. */
  unplacedBytes: number;
  /**
   * Moved bytes still kept here (not counted as used) for readers holding the old placement;
   * freed once their capabilities expire, or sooner when the space is needed.
   */
  retainedBytes: number;
  error: string | null;
}

/**
 * What this agent knows about moving its data off after a quota cut: the manager's answer to
 * the cut, then the progress of each relocate job as it runs here. The settings UI shows it.
 */
export class RelocationTracker {
  private jobs = new Map<string, { total: number; done: number; state: 'running' | 'done' }>();
  private evicted = 0;
  private unplaced = 0;
  private error: string | null = null;
  private expected = 0;

  /** The manager accepted a quota cut and answered with its plan. */
  planned(res: QuotaChangeResponse): void {
    this.jobs.clear();
    this.error = null;
    this.expected = res.relocating.reduce((s, r) => s + r.bytes, 0);
    for (const r of res.relocating)
      this.jobs.set(r.jobId, { total: r.bytes, done: 0, state: 'running' });
    this.evicted = res.evicting.length;
    this.unplaced = res.unplacedBytes;
  }

  progress(jobId: string, doneBytes: number, totalBytes: number): void {
    const j = this.jobs.get(jobId) ?? { total: totalBytes, done: 0, state: 'running' as const };
    this.jobs.set(jobId, { ...j, total: totalBytes, done: doneBytes });
  }

  finished(jobId: string): void {
    const j = this.jobs.get(jobId);
    if (j) this.jobs.set(jobId, { ...j, done: j.total, state: 'done' });
  }

  failed(message: string): void {
    this.error = message;
  }

  /** Progress as the settings page shows it (the store adds what it still retains). */
  snapshot(): Omit<RelocationProgress, 'retainedBytes'> {
    const list = [...this.jobs.values()];
    const totalBytes = Math.max(
      this.expected,
      list.reduce((s, j) => s + j.total, 0),
    );
    const doneBytes = list.reduce((s, j) => s + j.done, 0);
    const running = list.some((j) => j.state === 'running');
    const state =
      this.error !== null
        ? 'failed'
        : running
          ? 'relocating'
          : list.length > 0 || this.evicted > 0
            ? 'done'
            : 'idle';
    return {
      state,
      totalBytes,
      doneBytes,
      evicted: this.evicted,
      unplacedBytes: this.unplaced,
      error: this.error,
    };
  }
}
