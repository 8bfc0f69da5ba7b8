/**
 * A morsel is stalled once it has been at the head of its donor's line this many times the
 * donor's recent p90 per-morsel latency. Four: a donor's own p90 already covers its usual
 * jitter (owner bursts, TCP loss recovery); four times that is no longer a slow moment but a
 * donor that stopped (a frozen donor took ~3 s a morsel against ~30 ms healthy, issue 15).
 */
export const STALL_LATENCY_FACTOR = 4;
/**
 * Never call a morsel stalled sooner than this (milliseconds): above TCP's initial
 * retransmission timeout (1 s) and a desktop donor's GC or scheduling pause on a loaded machine,
 * so a fast donor's tiny p90 does not turn one hiccup into a dropped donor.
 */
export const STALL_FLOOR_MS = 2_000;
/**
 * Stalls in a row (no morsel delivered in between) after which a donor is dropped for the rest
 * of the read: once may be bad luck.
 */
export const STALLS_TO_DROP = 2;
/**
 * Stalls of one donor closer together than this count as one (milliseconds): a donor that stops
 * holds several morsels, and all of them stall or lose their hedges within the same moment. Per
 * morsel, one hiccup of a donor with two requests out counted twice and dropped it.
 */
export const STALL_EPISODE_MS = 1_000;
/** Recent per-morsel latencies kept per donor (a ring: the p90 follows the donor's present). */
export const LATENCY_SAMPLES = 32;
/** Samples a donor needs before its own p90 is trusted; until then the read's pooled p90 is. */
export const MIN_SAMPLES = 4;
/** How often outstanding morsels are checked (milliseconds): one timer per read, not per morsel. */
export const SWEEP_INTERVAL_MS = 250;

/** One donor's line: requests outstanding, since when the oldest is served, recent latencies. */
interface DonorClock {
  outstanding: number;
  /** When the request now at the head of the line got there (performance.now() ms). */
  headSince: number;
  samples: Float64Array;
  count: number;
  next: number;
}

/**
 * Per-donor latency of a read and the donors whose head-of-line morsel has waited far longer than
 * their recent latency. A donor's requests are answered in order (one pipelined connection), so a
 * morsel's latency is counted from when it reached the head of the line — the time the donor spent
 * on it alone, not the time it queued behind its predecessor. Nothing is allocated per morsel.
 *
 * @example
 *   const w = new StallWatch();
 *   w.started('a', 0); w.finished('a', 30, true); // one sample: 30 ms
 *   w.started('a', 40);
 *   w.stalled(10_000); // ['a'] once 10 s exceed max(4 × p90, 2 s)
 */
export class StallWatch {
  private readonly donors = new Map<string, DonorClock>();
  private readonly scratch = new Float64Array(LATENCY_SAMPLES);

  /** `unmeasuredMs`: the threshold while no donor of the read has enough samples. */
  constructor(private readonly unmeasuredMs = 10_000) {}

  /** A request to `donor` went on the wire at `now`. */
  started(donor: string, now: number): void {
    const c = this.clock(donor);
    if (c.outstanding++ === 0) c.headSince = now;
  }

  /** A request to `donor` ended at `now`; `ok` answers are latency samples, failures are not. */
  finished(donor: string, now: number, ok: boolean): void {
    const c = this.clock(donor);
    if (c.outstanding === 0) return;
    c.outstanding--;
    if (ok) {
      c.samples[c.next] = now - c.headSince;
      c.next = (c.next + 1) % LATENCY_SAMPLES;
      c.count = Math.min(c.count + 1, LATENCY_SAMPLES);
    }
    // The next request's clock starts now that it is at the head of the line.
    c.headSince = now;
  }

  /** How long `donor`'s head-of-line morsel may take before it counts as stalled (ms). */
  thresholdMs(donor: string): number {
    const p90 = this.latencyMs(donor);
    if (p90 === undefined) return Math.max(this.unmeasuredMs, STALL_FLOOR_MS);
    return Math.max(STALL_LATENCY_FACTOR * p90, STALL_FLOOR_MS);
  }

  /**
   * `donor`'s recent p90 time per morsel at the head of its line (ms): its own once it has
   * MIN_SAMPLES, else the read's pooled p90; undefined before the read has any.
   */
  latencyMs(donor: string): number | undefined {
    const c = this.donors.get(donor);
    const own = c && c.count >= MIN_SAMPLES ? this.p90([c]) : undefined;
    return own ?? this.p90([...this.donors.values()]);
  }

  /**
   * Donors whose head-of-line morsel has waited past its threshold at `now`. Each is reported
   * once per stall: its clock restarts, so the next report means the line stalled again.
   */
  stalled(now: number): string[] {
    const out: string[] = [];
    for (const [donor, c] of this.donors) {
      if (c.outstanding > 0 && now - c.headSince > this.thresholdMs(donor)) {
        c.headSince = now;
        out.push(donor);
      }
    }
    return out;
  }

  /** How long `donor`'s head-of-line morsel has waited at `now` (ms); 0 with nothing outstanding. */
  headAgeMs(donor: string, now: number): number {
    const c = this.donors.get(donor);
    return c && c.outstanding > 0 ? Math.max(0, now - c.headSince) : 0;
  }

  /** Whether any request is outstanding (the sweep may sleep otherwise). */
  get busy(): boolean {
    for (const c of this.donors.values()) if (c.outstanding > 0) return true;
    return false;
  }

  /** p90 of the samples of `clocks`, pooled; undefined below MIN_SAMPLES in all. */
  private p90(clocks: DonorClock[]): number | undefined {
    const total = clocks.reduce((s, c) => s + c.count, 0);
    if (total < MIN_SAMPLES) return undefined;
    const all =
      total <= LATENCY_SAMPLES ? this.scratch.subarray(0, total) : new Float64Array(total);
    let at = 0;
    for (const c of clocks) {
      all.set(c.samples.subarray(0, c.count), at);
      at += c.count;
    }
    all.sort();
    return all[Math.floor(0.9 * (total - 1))];
  }

  private clock(donor: string): DonorClock {
    let c = this.donors.get(donor);
    if (!c) {
      c = {
        outstanding: 0,
        headSince: 0,
        samples: new Float64Array(LATENCY_SAMPLES),
        count: 0,
        next: 0,
      };
      this.donors.set(donor, c);
    }
    return c;
  }
}
