import { describe, expect, it } from 'vitest';
import type { FreeLoaderEvent } from '@freeloader/protocol';
import { ThroughputRecorder } from './throughput.js';

const D1 = '11111111-1111-4111-8111-111111111111';
const D2 = '22222222-2222-4222-8222-222222222222';
const transfer = (jobId: string, state: string, doneBytes: number, rate: number, datasetId = D1) =>
  ({
    type: 'transfer',
    jobId,
    datasetId,
    agentId: null,
    state,
    doneBytes,
    totalBytes: 100,
    rate,
    error: null,
  }) as FreeLoaderEvent;

function recorder(opts: { capacity?: number; maxDatasets?: number } = {}) {
  let t = 0;
  const r = new ThroughputRecorder({ minIntervalMs: 500, now: () => t, ...opts });
  return { r, at: (ms: number) => (t = ms) };
}

describe('ThroughputRecorder', () => {
  it.each<[string, [number, FreeLoaderEvent][], { rate: number; doneBytes: number }[]]>([
    [
      'sums running jobs of one dataset',
      [
        [0, transfer('a', 'running', 10, 100)],
        [600, transfer('b', 'running', 20, 50)],
      ],
      [
        { rate: 100, doneBytes: 10 },
        { rate: 150, doneBytes: 30 },
      ],
    ],
    [
      'folds progress closer than the interval into one sample at its peak',
      [
        [0, transfer('a', 'running', 10, 100)],
        [100, transfer('a', 'running', 20, 80)],
      ],
      [{ rate: 100, doneBytes: 20 }],
    ],
    [
      "gives a job's end its own sample however soon it comes",
      [
        [0, transfer('a', 'running', 10, 100)],
        [100, transfer('a', 'done', 100, 0)],
      ],
      [
        { rate: 100, doneBytes: 10 },
        { rate: 0, doneBytes: 100 },
      ],
    ],
    [
      'counts a finished job as moving nothing',
      [
        [0, transfer('a', 'running', 10, 100)],
        [1000, transfer('a', 'done', 100, 0)],
      ],
      [
        { rate: 100, doneBytes: 10 },
        { rate: 0, doneBytes: 100 },
      ],
    ],
    [
      'ignores other datasets and non-transfer events',
      [
        [0, transfer('a', 'running', 10, 100, D2)],
        [600, { type: 'agent', agentId: D2, state: 'live' }],
      ],
      [],
    ],
  ])('%s', (_name, events, expected) => {
    const { r, at } = recorder();
    for (const [ms, e] of events) {
      at(ms);
      r.record(e);
    }
    expect(r.history(D1).map(({ rate, doneBytes }) => ({ rate, doneBytes }))).toEqual(expected);
  });

  it('keeps a bounded ring of samples and of datasets, and forgets deleted ones', () => {
    const { r, at } = recorder({ capacity: 3, maxDatasets: 1 });
    for (let i = 0; i < 5; i++) {
      at(i * 1000);
      r.record(transfer('a', 'running', i, i));
    }
    expect(r.history(D1).map((s) => s.doneBytes)).toEqual([2, 3, 4]);
    expect(r.history(D1)[0]!.at).toBe(new Date(2000).toISOString());
    r.record(transfer('x', 'running', 1, 1, D2));
    expect(r.history(D1)).toEqual([]);
    r.record({ type: 'dataset', datasetId: D2, state: 'deleted' });
    expect(r.history(D2)).toEqual([]);
  });
});
