import { describe, expect, it } from 'vitest';
import type { TransferView } from '@freeloader/protocol';
import { cachedText } from './CachedBar';
import { importProgress } from './import-progress';
import { mergeRatePoints } from './throughput-points';

const job = (over: Partial<TransferView>): TransferView => ({
  jobId: crypto.randomUUID(),
  kind: 'import',
  state: 'running',
  datasetId: 'd1',
  agentId: crypto.randomUUID(),
  doneBytes: 0,
  totalBytes: 0,
  rate: 0,
  etaSeconds: null,
  error: null,
  createdAt: '2025-01-01T00:00:00Z',
  updatedAt: '2025-01-01T00:00:01Z',
  ...over,
});

describe('importProgress', () => {
  it('sums an import over its donors and ignores other kinds', () => {
    const p = importProgress([
      job({ doneBytes: 3 << 20, totalBytes: 8 << 20 }),
      job({ doneBytes: 5 << 20, totalBytes: 8 << 20, state: 'done' }),
      job({ kind: 'delete', doneBytes: 99, totalBytes: 99 }),
    ]);
    expect(p.get('d1')).toEqual({ doneBytes: 8 << 20, totalBytes: 16 << 20 });
  });
});

describe('cachedText', () => {
  const d = { sizeBytes: 16 << 20, cachedBytes: 0 };
  it('shows an importing dataset’s progress instead of "none"', () => {
    expect(
      cachedText({ ...d, state: 'importing' }, { doneBytes: 4 << 20, totalBytes: 16 << 20 }),
    ).toEqual({
      label: 'importing 25 %',
      fraction: 0.25,
      detail: '4.00 MiB of 16.0 MiB',
    });
    expect(cachedText({ ...d, state: 'importing' }).label).toBe('importing');
  });
  it('counts the bytes of every copy, and says so', () => {
    const two = { ...d, state: 'importing' as const, replicas: 2 };
    expect(cachedText(two, { doneBytes: 8 << 20, totalBytes: 32 << 20 })).toEqual({
      label: 'importing 25 %',
      fraction: 0.25,
      detail: '8.00 MiB of 32.0 MiB (2 copies)',
    });
  });
  it('keeps the cached label for other states', () => {
    expect(cachedText({ ...d, state: 'failed' }).label).toBe('none');
    expect(cachedText({ ...d, cachedBytes: d.sizeBytes, state: 'ready' }).label).toBe('full');
  });
});

describe('mergeRatePoints', () => {
  it('keeps persisted points outside the live span and the live ones inside it', () => {
    expect(
      mergeRatePoints(
        [
          { at: 0, value: 1 },
          { at: 30_000, value: 2 },
          { at: 60_000, value: 3 },
        ],
        [
          { at: 29_000, value: 5 },
          { at: 31_000, value: 6 },
        ],
      ),
    ).toEqual([
      { at: 0, value: 1 },
      { at: 29_000, value: 5 },
      { at: 31_000, value: 6 },
      { at: 60_000, value: 3 },
    ]);
  });
});
