import type { DatasetMap } from '@freeloader/protocol';
import { defaultHashThreads } from './hash-pool.js';

/**
 * Encrypted reads smaller than this open their morsels on the network thread, without a hash
 * worker (bytes). Booting a worker (a V8 isolate) cost 0.11–0.13 CPU-s on the benchmark VM
 * (1 worker, 3 boots, load 25–30), and an encrypted morsel gains no CPU from a worker, only
 * parallelism: a 256 MiB `get` paid the boot as ~0.45 CPU-s per GiB read, on top of 2.9. At
 * 1 GiB and more the boot is at most ~0.12 CPU-s/GiB and the worker keeps AES-GCM (1.15 CPU-s/GiB)
 * off the thread that drives the network on a long read.
 */
export const INLINE_OPEN_MAX_BYTES = 2 ** 30;

/**
 * Hash workers a `get` of `map` should start: none for a small encrypted dataset (its AES-GCM
 * tag check runs inline, see INLINE_OPEN_MAX_BYTES); the default for a dataset stored in clear,
 * whose SHA-256 (2.84 CPU-s/GiB here) would cap the network thread near 350 MB/s.
 *
 * @example hashThreadsFor(map) // → 0 for a 256 MiB encrypted dataset
 */
export function hashThreadsFor(
  map: Pick<DatasetMap, 'dataKey'> & { dataset: { sizeBytes: number } },
  threads = defaultHashThreads(),
): number {
  const sealed = map.dataKey !== undefined;
  return sealed && map.dataset.sizeBytes < INLINE_OPEN_MAX_BYTES ? 0 : threads;
}
