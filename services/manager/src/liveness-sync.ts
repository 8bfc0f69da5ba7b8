import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import type { AgentsRepo } from './repositories/agents.js';
import { readSightings, writeSightings } from './repositories/liveness.js';
import type { SoftState } from './soft-state.js';

/** What the sync touches; the app satisfies it. */
export interface LivenessSyncDeps {
  pg: pg.Pool;
  softState: SoftState;
  agentsRepo: Pick<AgentsRepo, 'flushSoftState'>;
  config: { staleAfterMs: number };
  log: { warn(obj: object, msg: string): void };
}

/**
 * Soft state shared by every manager of the database: {@link flush} writes this manager's
 * sightings since the last flush (one transaction: the outages they ended, one multi-row
 * UPSERT of the shared liveness table, the agents table's display columns), {@link refresh}
 * reads the rows other managers wrote since the last read into the in-memory view. Both run
 * once per flush period; a failed write keeps its rows for the next one.
 *
 * Reads ask for versions above the highest seen two reads ago: a write that took its version
 * before, but committed after, a read is still picked up by the next one. A manager's own rows
 * are written with its writer id and not read back (it knows them); their versions still count
 * as seen, so the read's lower bound keeps up when no other manager writes.
 *
 * @example
 *   const sync = new LivenessSync(app);
 *   await sync.flush(); await sync.refresh();
 */
export class LivenessSync {
  private flushing: Promise<void> = Promise.resolve();
  private refreshing: Promise<void> | undefined;
  private readMarks: [number, number] = [0, 0];
  /** Marks this manager's rows in the shared table (a new one at every start). */
  readonly writer = randomUUID();
  /** The highest version this manager's own writes got. */
  private ownHighest = 0;

  constructor(private readonly deps: LivenessSyncDeps) {}

  /** Write pending sightings and outages (after any flush already running). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.flushOnce());
    return this.flushing;
  }

  /** Read the other managers' sightings into the view (joins a read already running). */
  refresh(): Promise<void> {
    this.refreshing ??= this.refreshOnce().finally(() => (this.refreshing = undefined));
    return this.refreshing;
  }

  private async flushOnce(): Promise<void> {
    const { softState } = this.deps;
    const rows = softState.takeDirty();
    const outages = softState.takeOutages();
    if (rows.length === 0 && outages.length === 0) return;
    try {
      const versions = await writeSightings(
        this.deps.pg,
        softState.sightingsOf(rows),
        outages,
        this.writer,
      );
      softState.noteVersions(versions);
      for (const v of versions.values()) if (v > this.ownHighest) this.ownHighest = v;
    } catch (err) {
      softState.markDirty(rows);
      softState.restoreOutages(outages);
      this.deps.log.warn({ err }, 'soft-state flush failed; will retry');
      return;
    }
    // The outages are written: a retry of this part alone must not claim them again.
    try {
      await this.deps.agentsRepo.flushSoftState(rows);
    } catch (err) {
      softState.markDirty(rows);
      this.deps.log.warn({ err }, 'soft-state flush of the agents table failed; will retry');
    }
  }

  private async refreshOnce(): Promise<void> {
    // Own versions known before the read count as seen by it (their rows are not read back).
    const own = this.ownHighest;
    try {
      const rows = await readSightings(
        this.deps.pg,
        this.readMarks[0],
        this.deps.config.staleAfterMs,
        this.writer,
      );
      this.deps.softState.merge(rows);
      const highest = rows.reduce(
        (m, r) => Math.max(m, r.version),
        Math.max(own, this.readMarks[1]),
      );
      this.readMarks = [this.readMarks[1], highest];
    } catch (err) {
      this.deps.log.warn({ err }, 'soft-state refresh failed; will retry');
    }
  }
}
