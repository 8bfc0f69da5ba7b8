import type { JobKind, JobState, TransferView } from '@freeloader/protocol';

/** One import (or delete, relocate …) of one dataset: its per-donor jobs taken together. */
export interface TransferGroup {
  key: string;
  datasetId: string | null;
  kind: JobKind;
  state: JobState;
  doneBytes: number;
  totalBytes: number;
  /** Bytes/s summed over the running jobs. */
  rate: number;
  errors: string[];
  updatedAt: string;
  jobs: TransferView[];
}

/** Precedence of job states when summing a group: the first one any job is in wins. */
const STATE_ORDER: JobState[] = ['failed', 'running', 'queued', 'done', 'cancelled'];

function groupState(jobs: readonly TransferView[]): JobState {
  const states = new Set(jobs.map((j) => j.state));
  // A mix of done and cancelled jobs finished; all cancelled did not.
  if (states.size === 2 && states.has('done') && states.has('cancelled')) return 'done';
  return STATE_ORDER.find((s) => states.has(s)) ?? 'queued';
}

const isActive = (s: JobState) => s === 'running' || s === 'queued';

/**
 * Gather per-donor job rows into one entry per (dataset, kind): summed bytes and rate, every
 * error, and one state. Active transfers come first, then the most recently updated; finished
 * and failed ones stay in the list.
 *
 * @example groupTransfers(rows)[0] // { datasetId, kind: 'import', doneBytes, totalBytes, rate, jobs: [...] }
 */
export function groupTransfers(rows: readonly TransferView[]): TransferGroup[] {
  const groups = new Map<string, TransferView[]>();
  for (const r of rows) {
    const key = r.datasetId ? `${r.datasetId}:${r.kind}` : r.jobId;
    const list = groups.get(key);
    if (list) list.push(r);
    else groups.set(key, [r]);
  }
  const out: TransferGroup[] = [];
  for (const [key, jobs] of groups) {
    const state = groupState(jobs);
    out.push({
      key,
      datasetId: jobs[0]!.datasetId,
      kind: jobs[0]!.kind,
      state,
      doneBytes: jobs.reduce((n, j) => n + j.doneBytes, 0),
      totalBytes: jobs.reduce((n, j) => n + j.totalBytes, 0),
      rate: jobs.reduce((n, j) => n + (j.state === 'running' ? j.rate : 0), 0),
      errors: [...new Set(jobs.flatMap((j) => (j.error ? [j.error] : [])))],
      updatedAt: jobs
        .map((j) => j.updatedAt)
        .sort()
        .at(-1)!,
      jobs: [...jobs].sort((a, b) => (a.agentId ?? '').localeCompare(b.agentId ?? '')),
    });
  }
  return out.sort(
    (a, b) =>
      Number(isActive(b.state)) - Number(isActive(a.state)) ||
      b.updatedAt.localeCompare(a.updatedAt),
  );
}

/** Fraction done of a group or job; a zero-byte transfer is complete once it is done. */
export function fractionDone(t: {
  doneBytes: number;
  totalBytes: number;
  state: JobState;
}): number {
  if (t.totalBytes > 0) return Math.min(1, t.doneBytes / t.totalBytes);
  return t.state === 'done' ? 1 : 0;
}
