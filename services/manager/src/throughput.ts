import type { FreeLoaderEvent, ThroughputSample } from '@freeloader/protocol';

type TransferEvent = Extract<FreeLoaderEvent, { type: 'transfer' }>;

export interface ThroughputOptions {
  /** Samples kept per dataset (a ring: the oldest go first). */
  capacity?: number;
  /** Progress events closer together than this update the latest sample instead of adding one. */
  minIntervalMs?: number;
  /** Datasets tracked at once; the least recently updated is forgotten beyond this. */
  maxDatasets?: number;
  now?: () => number;
}

interface DatasetTrack {
  jobs: Map<string, { rate: number; doneBytes: number }>;
  samples: { at: number; rate: number; doneBytes: number }[];
}

/**
 * Per-dataset import throughput history, built from the manager's own transfer events and kept
 * in memory only: bounded per dataset and in datasets, forgotten on restart. It exists so the
 * console's dataset page can draw a chart without a table written on every progress report.
 *
 * @example
 *   const t = new ThroughputRecorder();
 *   app.events.subscribe((e) => t.record(e));
 *   t.history(datasetId) // [{ at: '2025-…', rate: 52428800, doneBytes: 1048576 }, …]
 */
export class ThroughputRecorder {
  private readonly tracks = new Map<string, DatasetTrack>();
  private readonly capacity: number;
  private readonly minIntervalMs: number;
  private readonly maxDatasets: number;
  private readonly now: () => number;

  constructor(opts: ThroughputOptions = {}) {
    this.capacity = opts.capacity ?? 240;
    this.minIntervalMs = opts.minIntervalMs ?? 500;
    this.maxDatasets = opts.maxDatasets ?? 256;
    this.now = opts.now ?? Date.now;
  }

  /** Take any event; only transfer events of a dataset count. */
  record(e: FreeLoaderEvent): void {
    if (e.type === 'dataset' && e.state === 'deleted') this.tracks.delete(e.datasetId);
    if (e.type !== 'transfer' || !e.datasetId) return;
    const track = this.trackOf(e.datasetId);
    track.jobs.set(e.jobId, { rate: rateOf(e), doneBytes: e.doneBytes });
    let rate = 0;
    let doneBytes = 0;
    for (const j of track.jobs.values()) {
      rate += j.rate;
      doneBytes += j.doneBytes;
    }
    const at = this.now();
    const last = track.samples.at(-1);
    // Progress close together folds into one sample at its peak; a job's end always gets its
    // own sample, so a short import still shows its rate and then the drop to zero.
    if (last && at - last.at < this.minIntervalMs && e.state === 'running') {
      last.rate = Math.max(last.rate, rate);
      last.doneBytes = doneBytes;
      return;
    }
    track.samples.push({ at, rate, doneBytes });
    if (track.samples.length > this.capacity) track.samples.shift();
  }

  /** Samples of a dataset, oldest first (empty when none were seen). */
  history(datasetId: string): ThroughputSample[] {
    const samples = this.tracks.get(datasetId)?.samples ?? [];
    return samples.map((s) => ({
      at: new Date(s.at).toISOString(),
      rate: s.rate,
      doneBytes: s.doneBytes,
    }));
  }

  private trackOf(datasetId: string): DatasetTrack {
    let track = this.tracks.get(datasetId);
    if (track) {
      // Re-insert so Map order is least recently updated first.
      this.tracks.delete(datasetId);
    } else {
      track = { jobs: new Map(), samples: [] };
    }
    this.tracks.set(datasetId, track);
    while (this.tracks.size > this.maxDatasets) {
      this.tracks.delete(this.tracks.keys().next().value!);
    }
    return track;
  }
}

/** A finished or queued job moves nothing, whatever rate it last reported. */
function rateOf(e: TransferEvent): number {
  return e.state === 'running' ? Math.max(0, e.rate) : 0;
}
