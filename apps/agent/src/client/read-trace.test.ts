import { describe, expect, it } from 'vitest';
import { summariseTrace, type TraceEvent } from './read-trace.js';

describe('summariseTrace', () => {
  it('splits a donor’s idle time by what its workers were doing then', () => {
    // Donor A, one worker: balance 0–100 ms, on the wire 100–300, verifying 300–400, its write
    // (not the worker's: it goes on) 400–900; then done. The trace runs until 1000 ms, where
    // donor B's request ends.
    const events: TraceEvent[] = [
      { phase: 'balance', index: 0, t0: 0, t1: 100, donor: 'A', worker: 0 },
      { phase: 'net', index: 0, t0: 100, t1: 300, donor: 'A' },
      { phase: 'verify', index: 0, t0: 300, t1: 400 },
      { phase: 'write', index: 0, t0: 400, t1: 900, donor: 'A' },
      { phase: 'balance', index: 1, t0: 0, t1: 0, donor: 'B', worker: 1 },
      { phase: 'net', index: 1, t0: 0, t1: 1000, donor: 'B' },
    ];
    const s = summariseTrace(events, 0);
    expect(s.seconds).toBe(1);
    expect(s.donors.B).toEqual({ busy: 1, idle: 0, idleBy: {} });
    const a = s.donors.A!;
    expect(a.busy).toBeCloseTo(0.2);
    expect(a.idle).toBeCloseTo(0.8);
    expect(a.idleBy.balance).toBeCloseTo(0.1);
    expect(a.idleBy.verify).toBeCloseTo(0.1);
    expect(a.idleBy.done).toBeCloseTo(0.6);
    expect(a.idleBy.write).toBeUndefined();
    expect(s.phases.write).toBeCloseTo(0.5);
  });
});
