import { describe, expect, it } from 'vitest';
import type { FailureMarks } from '../repositories/failure-marks.js';
import { departures } from './failure-classes.js';

const mark = (id: string, m: Partial<FailureMarks> = {}): FailureMarks => ({
  id,
  url: '',
  freeBytes: 0,
  lost: false,
  revoked: false,
  leaving: false,
  bandwidthOnly: false,
  ...m,
});

describe('departures (the dispatch-only pass reads the marks as they stand)', () => {
  it('names revoked, leaving and lost donors, not a lost one heartbeating again nor bandwidth-only ones', () => {
    const live = new Set(['back']);
    const got = departures(
      [
        mark('fine'),
        mark('gone', { revoked: true }),
        mark('leaver', { leaving: true }),
        mark('dead', { lost: true }),
        mark('back', { lost: true }),
        mark('bw', { lost: true, bandwidthOnly: true }),
      ],
      (id) => live.has(id),
    );
    expect(Object.fromEntries(got)).toEqual({ gone: 'revoked', leaver: 'leaving', dead: 'lost' });
  });
});
