import type pg from 'pg';
import type { SoftState } from '../soft-state.js';
import {
  compactHistory,
  donorsToSample,
  importRates,
  insertSamples,
  type Retention,
  type Sample,
} from '../repositories/history.js';

/** Raw samples for a day, then 10-minute averages for 30 days. */
export const DEFAULT_RETENTION: Retention = {
  rawKeepS: 24 * 3600,
  bucketS: 600,
  keepS: 30 * 24 * 3600,
};

/** What sampling reads: the database and soft state (the app satisfies it). */
export interface SamplerDeps {
  pg: pg.Pool;
  softState: Pick<SoftState, 'stateOf' | 'heartbeatOf'>;
}

/**
 * One sample of everything the console charts: per donor its used bytes (the manager's
 * ledger), serving rate and liveness (1 live, else 0) from soft state; per importing dataset
 * its summed import rate; and the cluster's total import rate.
 *
 * @example const samples = await takeSamples(app, 30) // [{ series: 'donor_used', subject, value }, …]
 */
export async function takeSamples(deps: SamplerDeps, intervalS: number): Promise<Sample[]> {
  const samples: Sample[] = [];
  for (const d of await donorsToSample(deps.pg)) {
    const live = deps.softState.stateOf(d.id) === 'live';
    samples.push(
      { series: 'donor_used', subject: d.id, value: d.used },
      {
        series: 'donor_serving',
        subject: d.id,
        value: live ? (deps.softState.heartbeatOf(d.id)?.servingRate ?? 0) : 0,
      },
      { series: 'donor_up', subject: d.id, value: live ? 1 : 0 },
    );
  }
  let total = 0;
  for (const r of await importRates(deps.pg, 2 * intervalS)) {
    samples.push({ series: 'dataset_rate', subject: r.datasetId, value: r.rate });
    total += r.rate;
  }
  samples.push({ series: 'import_rate', subject: null, value: total });
  return samples;
}

/**
 * Samples the cluster every `intervalS` into PostgreSQL, so the console's history survives a
 * reload and a manager restart, and compacts the table (at most once a minute) so it stays
 * bounded. Runs one sample at a time; a failed one is logged and the next tries again.
 */
export class HistorySampler {
  private running: Promise<void> | null = null;
  private lastCompactMs = 0;

  constructor(
    private readonly deps: SamplerDeps,
    readonly intervalS: number,
    private readonly retention: Retention = DEFAULT_RETENTION,
  ) {}

  /** Take and store one sample now (waits for one already running instead of overlapping). */
  async sampleNow(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.sample().finally(() => (this.running = null));
    return this.running;
  }

  private async sample(): Promise<void> {
    await insertSamples(this.deps.pg, await takeSamples(this.deps, this.intervalS));
    if (Date.now() - this.lastCompactMs >= 60_000) {
      this.lastCompactMs = Date.now();
      await compactHistory(this.deps.pg, this.retention);
    }
  }

  /** Wait for a sample in progress (shutdown). */
  async idle(): Promise<void> {
    await this.running?.catch(() => undefined);
  }
}
