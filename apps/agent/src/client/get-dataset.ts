import type { Writable } from 'node:stream';
import type { DatasetMap, FreeLoaderError } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import { DatasetReader } from './dataset-reader.js';
import { fetchMap } from './fetch-map.js';
import { reportReadOutcome } from './report-rates.js';
import { sourceFallback } from './source-fallback.js';

export interface GetOptions {
  manager: ManagerClient;
  dataset: string;
  /** Where the bytes go, in order. Backpressure is respected. */
  sink: Writable;
  onProgress?: (doneBytes: number, totalBytes: number) => void;
  onDonorFailure?: (donorId: string, error: FreeLoaderError) => void;
  /** Morsels buffered or in flight (default: the seed's W·(S+1)). */
  window?: number;
}

export interface GetSummary {
  map: DatasetMap;
  bytes: number;
  seconds: number;
  donorFailures: number;
}

/** Read a whole dataset from its donors, verified, in order, into `sink`. */
export async function getDataset(opts: GetOptions): Promise<GetSummary> {
  const map = await fetchMap(opts.manager, opts.dataset);
  const fallback = sourceFallback(map);
  let donorFailures = 0;
  const failed: { donor: string; error: string }[] = [];
  const reader = new DatasetReader(map, {
    ...(fallback.read ? { fromSource: fallback.read } : {}),
    onDonorFailure: (donor, error) => {
      donorFailures++;
      failed.push({ donor, error: error.code });
      opts.onDonorFailure?.(donor, error);
    },
  });
  const started = performance.now();
  let bytes = 0;
  try {
    const window = opts.window ?? reader.defaultWindow();
    for await (const morsel of reader.morsels(0, reader.count, window)) {
      // The slot goes back to the pool only once the sink is done with its bytes.
      const flowing = opts.sink.write(morsel.data, () => morsel.release());
      if (!flowing) await new Promise((r) => opts.sink.once('drain', r));
      bytes += morsel.data.length;
      opts.onProgress?.(bytes, map.dataset.sizeBytes);
    }
  } finally {
    await reader.close();
    await fallback.close();
  }
  const seconds = (performance.now() - started) / 1000;
  await reportReadOutcome(opts.manager, map.dataset.id, reader.donorRates(), failed).catch(
    () => undefined,
  );
  return { map, bytes, seconds, donorFailures };
}
