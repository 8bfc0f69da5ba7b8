import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import type { CacheStatus } from '@freeloader/protocol';
import { renderUi } from '../test/render';
import { CacheSpace, CachedDatasets } from './CachePage';

const MiB = 2 ** 20;
const status: CacheStatus = {
  capacityBytes: 100 * MiB,
  usedBytes: 50 * MiB,
  highWatermark: 0.9,
  lowWatermark: 0.75,
  evictions: {
    trims: 2,
    trimmedBytes: 6 * MiB,
    evictions: 1,
    evictedBytes: 3 * MiB,
    extensions: 4,
    extendedBytes: 12 * MiB,
    lastAt: null,
  },
  datasets: [
    {
      id: '00000000-0000-4000-8000-000000000001',
      path: 'climate/tas.nc',
      source: 'https://data.example.org',
      sizeBytes: 40 * MiB,
      cachedBytes: 10 * MiB,
      prefixBytes: 12 * MiB,
      pinned: true,
      lastAccessAt: null,
      reads: 7,
      extendingToBytes: 30 * MiB,
    },
  ],
};

describe('cache page parts', () => {
  it('shows space, watermarks and eviction counts', () => {
    renderUi(<CacheSpace s={status} />);
    expect(screen.getByText(/2 trims/)).toBeInTheDocument();
    expect(screen.getByText(/1 evictions/)).toBeInTheDocument();
    expect(screen.getByText(/4 extensions \(12\.0 MiB\)/)).toBeInTheDocument();
  });

  it('lists each dataset with its cached part, model prefix and pin', () => {
    renderUi(<CachedDatasets s={status} />);
    expect(screen.getByText('climate/tas.nc')).toBeInTheDocument();
    expect(screen.getByLabelText('pin climate/tas.nc')).toBeChecked();
    expect(screen.getByText('(extending to 30.0 MiB)')).toBeInTheDocument();
    expect(screen.getByText('7')).toBeInTheDocument();
  });
});
