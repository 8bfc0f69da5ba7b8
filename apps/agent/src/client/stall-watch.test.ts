import { describe, expect, it } from 'vitest';
import { MIN_SAMPLES, STALL_FLOOR_MS, STALL_LATENCY_FACTOR, StallWatch } from './stall-watch.js';

/** `n` morsels of `ms` each from `donor`, pipelined two deep, starting at `t`; the end time. */
function serve(w: StallWatch, donor: string, n: number, ms: number, t = 0): number {
  w.started(donor, t);
  for (let i = 0; i < n; i++) {
    w.started(donor, t);
    t += ms;
    w.finished(donor, t, true);
  }
  w.finished(donor, t, true);
  return t;
}

describe('StallWatch', () => {
  it('uses the floor while the unmeasured threshold is smaller', () => {
    expect(new StallWatch(500).thresholdMs('a')).toBe(STALL_FLOOR_MS);
    expect(new StallWatch(10_000).thresholdMs('a')).toBe(10_000);
  });

  it('counts latency from the head of the line, not from the send', () => {
    const w = new StallWatch();
    // Each 1 s morsel waited 1 s behind its predecessor: the donor's own latency is 1 s.
    serve(w, 'a', 20, 1_000);
    expect(w.thresholdMs('a')).toBe(STALL_LATENCY_FACTOR * 1_000);
  });

  it('reports a donor whose head-of-line morsel outlasts its threshold, once per stall', () => {
    const w = new StallWatch();
    const t = serve(w, 'a', 10, 800);
    w.started('a', t);
    const limit = STALL_LATENCY_FACTOR * 800;
    expect(w.stalled(t + limit - 1)).toEqual([]);
    expect(w.stalled(t + limit + 1)).toEqual(['a']);
    // The clock restarted: the same stall is not reported twice.
    expect(w.stalled(t + limit + 2)).toEqual([]);
    expect(w.stalled(t + 2 * limit + 2)).toEqual(['a']);
  });

  it("judges a donor without samples of its own by the read's pooled p90", () => {
    const w = new StallWatch();
    serve(w, 'fast', MIN_SAMPLES + 1, 1_000);
    w.started('new', 0);
    expect(w.thresholdMs('new')).toBe(STALL_LATENCY_FACTOR * 1_000);
    expect(w.stalled(STALL_LATENCY_FACTOR * 1_000 + 1)).toEqual(['new']);
  });

  it('never reports an idle donor, and failures are not latency samples', () => {
    const w = new StallWatch(10_000);
    w.started('a', 0);
    w.finished('a', 60_000, false);
    expect(w.busy).toBe(false);
    expect(w.stalled(120_000)).toEqual([]);
    expect(w.thresholdMs('a')).toBe(10_000);
  });
});
