import { MiB, type DatasetMap, type DatasetView, type Extent } from '@freeloader/protocol';

/** Donor ids of {@link twoCopiesMap}'s two copies. */
export const COPY_A = '00000000-0000-4000-8000-00000000000a';
export const COPY_B = '00000000-0000-4000-8000-00000000000b';

/**
 * A 4 MiB dataset's map with two full copies, copy 0 on COPY_A and copy 1 on COPY_B, for reader
 * tests that never reach a donor (or reach one that refuses).
 *
 * @example new DatasetReader(twoCopiesMap([{ id: COPY_A, url, state: 'live' }, …]))
 */
export function twoCopiesMap(donors: DatasetMap['donors']): DatasetMap {
  const dataset = {
    id: '00000000-0000-4000-8000-000000000001',
    sizeBytes: 4 * MiB,
    morselSize: MiB,
  } as DatasetView;
  const extent = (copy: number, id: string): Extent => ({
    copy,
    first: 0,
    count: 4,
    unit: 1,
    phase: 0,
    donors: [id],
  });
  return {
    dataset,
    extents: [extent(0, COPY_A), extent(1, COPY_B)],
    donors,
    hashes: '0'.repeat(4 * 64),
    capability: 'x',
    capabilityExpiresAt: new Date().toISOString(),
  };
}
