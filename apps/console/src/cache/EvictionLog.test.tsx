import { describe, expect, it } from 'vitest';
import type { EvictionLogEntry } from '@freeloader/protocol';
import { evictionWhy } from './EvictionLog';

const entry = (over: Partial<EvictionLogEntry>): EvictionLogEntry => ({
  id: 1,
  kind: 'evict',
  datasetId: null,
  datasetPath: 'old/a.nc',
  bytes: 1,
  at: '2025-01-01T00:00:00Z',
  reason: null,
  forDatasetId: null,
  forPath: null,
  forUserId: null,
  forUserName: null,
  ...over,
});

describe('evictionWhy', () => {
  it.each<[Partial<EvictionLogEntry>, string]>([
    [
      { reason: 'import', forPath: 'new/b.nc', forUserName: 'alice' },
      'to make room for new/b.nc (imported by alice)',
    ],
    [{ reason: 'import' }, 'to make room for an import'],
    [{ reason: 'watermark' }, 'the cache passed its high watermark'],
    [{ reason: 'admin', forUserName: 'root' }, 'cut by root'],
    [{ kind: 'extend' }, 'read often, and the cache had room'],
    [{}, 'reason not recorded'],
  ])('%j → %s', (over, why) => {
    expect(evictionWhy(entry(over))).toBe(why);
  });
});
