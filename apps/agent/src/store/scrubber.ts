import { readFile } from 'node:fs/promises';
import { setTimeout as delay } from 'node:timers/promises';
import { isFreeLoaderError, SCRUB_CHECKPOINT_MS } from '@freeloader/protocol';
import { writeFileAtomic } from './fs-layout.js';
import { scrubRate, type ScrubSettings } from './scrub-rate.js';
import type { MorselStore } from './store.js';

/** While the owner is active (or the store is empty), look again this often (milliseconds). */
export const SCRUB_HOLD_POLL_MS = 1_000;
/** With nothing stored, look for new data this often (milliseconds). */
export const SCRUB_IDLE_POLL_MS = 5_000;

/** A morsel the scrub found bad and dropped. */
export interface ScrubFinding {
  datasetId: string;
  index: number;
}

/** Where the scrub is: the last morsel it checked, and passes completed (persisted). */
export interface ScrubPosition {
  datasetId: string;
  index: number;
  passes: number;
}

export interface ScrubberDeps {
  store: Pick<MorselStore, 'list' | 'stat' | 'verify' | 'free' | 'usage'>;
  /** The position file (JSON), so a restart resumes where the scrub stopped. */
  positionFile: string;
  settings: () => ScrubSettings;
  /** True while the governor says the owner is active or donating is paused: the scrub waits. */
  held: () => boolean;
  /** A bad morsel was freed (no longer advertised); report it. */
  onBad: (finding: ScrubFinding) => void;
  log?: { warn(obj: object, msg: string): void };
  /** Abortable sleep (tests may speed it up). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /** Monotonic milliseconds. */
  clock?: () => number;
}

export interface ScrubStatus {
  state: 'stopped' | 'running' | 'held' | 'idle';
  /** Rate the scrub runs at now (bytes/s; Infinity: full speed). */
  bytesPerSecond: number;
  checkedMorsels: number;
  checkedBytes: number;
  badMorsels: number;
  passes: number;
}

interface Cursor {
  datasetId: string;
  morselSize: number;
  indices: number[];
  at: number;
}

/**
 * The background scrub (issue 15 item 4): re-hashes every stored morsel in turn, dataset by
 * dataset in id order and morsel by morsel in index order, paced so a full pass takes the
 * configured period ({@link scrubRate}). It waits while {@link ScrubberDeps.held} (the owner is
 * at the machine, or donating is paused), persists its position every SCRUB_CHECKPOINT_MS so a
 * restart resumes rather than starting over, and frees a morsel whose bytes no longer match its
 * hash — the donor stops advertising it — before reporting it.
 *
 * @example
 *   const scrub = new Scrubber({ store, positionFile, settings: () => ({}), held: () => false,
 *     onBad: (f) => reporter.add(f) });
 *   scrub.start(); … await scrub.stop();
 */
export class Scrubber {
  private cursor: Cursor | undefined;
  /** The last morsel checked (undefined before the first). */
  private position: Pick<ScrubPosition, 'datasetId' | 'index'> | undefined;
  private passes = 0;
  private loaded = false;
  private savedAt = 0;
  private dirty = false;
  private running: Promise<void> | undefined;
  private stopped = false;
  private abort = new AbortController();
  private readonly counts = { checkedMorsels: 0, checkedBytes: 0, badMorsels: 0 };
  private state: ScrubStatus['state'] = 'stopped';
  private readonly sleep: (ms: number, signal: AbortSignal) => Promise<void>;
  private readonly clock: () => number;

  constructor(private readonly deps: ScrubberDeps) {
    this.sleep = deps.sleep ?? ((ms, signal) => delay(ms, undefined, { signal }));
    this.clock = deps.clock ?? (() => performance.now());
  }

  /** Run in the background until {@link stop} (a stopped scrubber never starts again). */
  start(): void {
    if (this.running || this.stopped) return;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    this.running = this.loop(signal).catch((e: unknown) => {
      if (!signal.aborted) this.deps.log?.warn({ err: String(e) }, 'scrub stopped on an error');
    });
  }

  /** Stop for good, and persist the position. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.abort.abort();
    await this.running;
    this.running = undefined;
    this.state = 'stopped';
    await this.checkpoint(true).catch(() => undefined);
  }

  status(): ScrubStatus {
    return {
      state: this.state,
      bytesPerSecond: this.rate(),
      ...this.counts,
      passes: this.passes,
    };
  }

  /**
   * Check the next morsel: returns the bytes checked (0 when nothing is stored). A morsel whose
   * bytes do not match is freed and reported; one freed meanwhile by someone else is skipped.
   */
  async step(): Promise<number> {
    const next = await this.next();
    if (!next) return 0;
    const { datasetId, index, morselSize } = next;
    let ok: boolean;
    try {
      ok = await this.deps.store.verify(datasetId, index);
    } catch (e) {
      if (isFreeLoaderError(e) && /_NOT_FOUND$/.test(e.code)) return morselSize;
      throw e;
    }
    this.counts.checkedMorsels++;
    this.counts.checkedBytes += morselSize;
    if (!ok) {
      this.counts.badMorsels++;
      await this.deps.store.free(datasetId, index);
      this.deps.onBad({ datasetId, index });
    }
    this.position = { datasetId, index };
    this.dirty = true;
    return morselSize;
  }

  private rate(): number {
    return scrubRate(this.deps.store.usage().usedBytes, this.deps.settings());
  }

  private async loop(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      if (this.deps.held()) {
        this.state = 'held';
        await this.sleep(SCRUB_HOLD_POLL_MS, signal);
        continue;
      }
      this.state = 'running';
      const started = this.clock();
      let bytes: number;
      try {
        bytes = await this.step();
        await this.checkpoint(false);
      } catch (e) {
        if (signal.aborted) return;
        // A read or write error is no reason to stop scrubbing for good: try again later.
        this.deps.log?.warn({ err: String(e) }, 'scrub step failed; retrying later');
        await this.sleep(SCRUB_IDLE_POLL_MS, signal);
        continue;
      }
      if (bytes === 0) {
        this.state = 'idle';
        await this.sleep(SCRUB_IDLE_POLL_MS, signal);
        continue;
      }
      const rate = this.rate();
      if (!Number.isFinite(rate)) continue;
      const wait = (bytes / rate) * 1000 - (this.clock() - started);
      if (wait > 0) await this.sleep(wait, signal);
    }
  }

  /** The morsel after the current position (wrapping to the first dataset after a full pass). */
  private async next(): Promise<
    { datasetId: string; index: number; morselSize: number } | undefined
  > {
    await this.load();
    const c = this.cursor;
    if (c && c.at < c.indices.length) return this.take(c);
    const ids = (await this.deps.store.list()).map((d) => d.datasetId).sort();
    if (ids.length === 0) return undefined;
    const after = c?.datasetId ?? this.position?.datasetId;
    let start = after === undefined ? 0 : ids.findIndex((x) => x > after);
    if (start < 0) {
      this.passDone();
      start = 0;
    }
    for (let k = 0; k < ids.length; k++) {
      const i = (start + k) % ids.length;
      if (k > 0 && i === 0) this.passDone();
      this.cursor = await this.cursorAt(ids[i]!, -1);
      if (this.cursor.indices.length > 0) return this.take(this.cursor);
    }
    return undefined;
  }

  private take(c: Cursor): { datasetId: string; index: number; morselSize: number } {
    return { datasetId: c.datasetId, index: c.indices[c.at++]!, morselSize: c.morselSize };
  }

  /** Past the last dataset: a full pass is complete. */
  private passDone(): void {
    this.passes++;
    this.dirty = true;
  }

  private async cursorAt(datasetId: string, afterIndex: number): Promise<Cursor> {
    try {
      const st = await this.deps.store.stat(datasetId);
      const indices = st.indices.filter((i) => i > afterIndex);
      return { datasetId, morselSize: st.morselSize, indices, at: 0 };
    } catch (e) {
      if (isFreeLoaderError(e) && e.code === 'DATASET_NOT_FOUND') {
        return { datasetId, morselSize: 0, indices: [], at: 0 };
      }
      throw e;
    }
  }

  /** Read the persisted position once; resume inside its dataset when that is still held. */
  private async load(): Promise<void> {
    if (this.loaded) return;
    this.loaded = true;
    const saved = await readPosition(this.deps.positionFile);
    if (saved) {
      this.position = { datasetId: saved.datasetId, index: saved.index };
      this.passes = saved.passes;
      this.cursor = await this.cursorAt(saved.datasetId, saved.index);
    }
    this.savedAt = this.clock();
  }

  private async checkpoint(force: boolean): Promise<void> {
    if (!this.dirty || !this.position) return;
    if (!force && this.clock() - this.savedAt < SCRUB_CHECKPOINT_MS) return;
    this.dirty = false;
    this.savedAt = this.clock();
    const saved: ScrubPosition = { ...this.position, passes: this.passes };
    await writeFileAtomic(this.deps.positionFile, JSON.stringify(saved));
  }
}

/** The saved position, or undefined when there is none (or it is unreadable: start over). */
export async function readPosition(file: string): Promise<ScrubPosition | undefined> {
  try {
    const p = JSON.parse(await readFile(file, 'utf8')) as Partial<ScrubPosition>;
    if (typeof p.datasetId !== 'string' || !Number.isSafeInteger(p.index)) return undefined;
    return { datasetId: p.datasetId, index: p.index!, passes: p.passes ?? 0 };
  } catch {
    return undefined;
  }
}
