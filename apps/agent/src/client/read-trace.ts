/**
 * Where a read's time goes, per donor and per worker (`get --trace FILE`): every phase a morsel
 * passes through is recorded as an interval, and {@link summariseTrace} says what a donor's
 * workers were doing while the donor had nothing in flight (its idle time on the wire).
 *
 * Phases, in a morsel's order: `balance` (the worker waits for its turn, {@link ProgressBalance}),
 * `slot` (waits for a slab slot), `queue` (waits for a request slot to its donor), `net` (request
 * on the wire until its body is in), `verify` (hash or AES-GCM tag, off the network thread),
 * `write` (the output's write). `close` is the reader's shutdown after the last morsel.
 */
export type TracePhase = 'balance' | 'slot' | 'queue' | 'net' | 'verify' | 'write' | 'close';

/** One recorded interval (milliseconds of `performance.now()`). */
export interface TraceEvent {
  phase: TracePhase;
  /** Morsel index (-1 for `close`). */
  index: number;
  t0: number;
  t1: number;
  /** The donor asked (`queue`, `net`) or whose queue the worker serves (`balance`, `write`). */
  donor?: string;
  /** The unordered read's worker (`balance`; writes go on while it asks for the next morsel). */
  worker?: number;
}

/** Bin width of the idle-time attribution (milliseconds): finer than one 1 MiB morsel (~90 ms). */
export const TRACE_BIN_MS = 1;

/** Collects a read's phases. Cheap enough to leave in the path: one object per phase. */
export class ReadTrace {
  readonly events: TraceEvent[] = [];
  /** Where the read starts (after the map arrived): set by {@link begin}. */
  started = performance.now();

  /** The read starts now: earlier events (none, normally) fall before the summary's window. */
  begin(): void {
    this.started = performance.now();
  }

  /**
   * Record `phase` of morsel `index` from `t0` until now (or until `until`, for a phase that ended
   * before the morsel was known); returns its end.
   */
  mark(
    phase: TracePhase,
    index: number,
    t0: number,
    extra: { donor?: string; worker?: number } = {},
    until?: number,
  ): number {
    const t1 = until ?? performance.now();
    this.events.push({ phase, index, t0, t1, ...extra });
    return t1;
  }
}

/** What {@link summariseTrace} finds, in seconds. */
export interface TraceSummary {
  /** From the trace's start to its last event. */
  seconds: number;
  /** Per donor: time with a request in flight, without, and what its workers did while without. */
  donors: Record<string, { busy: number; idle: number; idleBy: Record<string, number> }>;
  /** Per phase: seconds summed over every morsel (phases of different morsels overlap). */
  phases: Record<string, number>;
  /** Reader shutdown after the last morsel. */
  close: number;
}

/**
 * Per donor, its idle time (no `net` interval open) split by what each of its workers was doing
 * then, each worker weighing 1/workers: a phase name, `other` (between phases: the event loop,
 * JavaScript), `done` (the worker's queue ran out) or `start` (before its first phase).
 */
export function summariseTrace(events: readonly TraceEvent[], started: number): TraceSummary {
  const end = Math.max(started, ...events.map((e) => e.t1));
  const bins = Math.ceil((end - started) / TRACE_BIN_MS);
  const bin = (t: number): number =>
    Math.min(bins, Math.max(0, Math.floor((t - started) / TRACE_BIN_MS)));
  const byIndex = new Map<number, TraceEvent[]>();
  for (const e of events) {
    if (e.index < 0) continue;
    let list = byIndex.get(e.index);
    if (!list) byIndex.set(e.index, (list = []));
    list.push(e);
  }
  // A worker's timeline: every phase of the morsels it took (known from its balance/write marks).
  const workers = new Map<number, { donor: string; events: TraceEvent[] }>();
  for (const e of events) {
    if (e.worker === undefined || e.phase !== 'balance') continue;
    let w = workers.get(e.worker);
    if (!w) workers.set(e.worker, (w = { donor: e.donor ?? '', events: [] }));
    w.events.push(
      ...(byIndex.get(e.index) ?? []).filter(
        (x) => x.phase !== 'write' && (x.worker === undefined || x.worker === e.worker),
      ),
    );
  }
  const phases: Record<string, number> = {};
  for (const e of events) phases[e.phase] = (phases[e.phase] ?? 0) + (e.t1 - e.t0) / 1000;
  const donors: TraceSummary['donors'] = {};
  const donorIds = new Set(events.filter((e) => e.phase === 'net').map((e) => e.donor ?? ''));
  for (const d of donorIds) {
    const busy = new Uint8Array(bins);
    for (const e of events)
      if (e.phase === 'net' && e.donor === d) busy.fill(1, bin(e.t0), bin(e.t1));
    const mine = [...workers.values()].filter((w) => w.donor === d);
    const states = mine.map((w) => workerStates(w.events, bins, bin));
    const idleBy: Record<string, number> = {};
    let busyBins = 0;
    for (let b = 0; b < bins; b++) {
      if (busy[b]) {
        busyBins++;
        continue;
      }
      for (const s of states) {
        const k = s[b]!;
        idleBy[k] = (idleBy[k] ?? 0) + TRACE_BIN_MS / 1000 / states.length;
      }
      if (states.length === 0) idleBy.unassigned = (idleBy.unassigned ?? 0) + TRACE_BIN_MS / 1000;
    }
    donors[d] = {
      busy: (busyBins * TRACE_BIN_MS) / 1000,
      idle: ((bins - busyBins) * TRACE_BIN_MS) / 1000,
      idleBy,
    };
  }
  const close = events.filter((e) => e.phase === 'close').reduce((s, e) => s + (e.t1 - e.t0), 0);
  return { seconds: (end - started) / 1000, donors, phases, close: close / 1000 };
}

/** A worker's phase in every bin: the phase that started last wins where phases overlap. */
function workerStates(
  events: readonly TraceEvent[],
  bins: number,
  bin: (t: number) => number,
): string[] {
  const sorted = [...events].sort((a, b) => a.t0 - b.t0);
  const first = sorted.length > 0 ? bin(sorted[0]!.t0) : bins;
  const last = Math.max(0, ...sorted.map((e) => bin(e.t1)));
  const states = Array.from({ length: bins }, (_, b): string =>
    b < first ? 'start' : b >= last ? 'done' : 'other',
  );
  for (const e of sorted) {
    // Hedge backups and other donors' requests for this morsel are the worker waiting on `net`.
    for (let b = bin(e.t0); b < bin(e.t1); b++) states[b] = e.phase;
  }
  return states;
}
