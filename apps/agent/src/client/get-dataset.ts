import type { FileHandle } from 'node:fs/promises';
import type { Writable } from 'node:stream';
import type { DatasetMap, FreeLoaderError } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import { DatasetReader, type DonorRate } from './dataset-reader.js';
import { fetchMap, mapHashesOf } from './fetch-map.js';
import { HashPool } from './hash-pool.js';
import { reportBadCopies, reportReadOutcome, type BadCopy } from './report-rates.js';
import { sourceFallback } from './source-fallback.js';
import type { ReadTrace } from './read-trace.js';
import { OutputWriter } from './output-writer.js';
import { readUnordered } from './unordered-read.js';
import { readInOrder } from './in-order-read.js';

/**
 * Slab slots per donor, beyond the read window, for verified morsels waiting for their write to
 * the output file: requests go on while the disk is slow for a moment. Writes go through
 * libuv's pool, not awaited by the read's workers. Awaited, at W=8 on the LAN (load 12–24, a
 * disk shared with other processes' tests) every worker of a donor sat waiting for the output's
 * write 3–9 s of a 12–20 s read (170–860 ms per MiB); written synchronously on the network
 * thread instead, as aria2c does, the writes held the event loop 12.8 s of a 21 s read; one
 * write at a time through the pool wrote 25–33 MB/s (a thread hand-off per write).
 */
export const WRITE_BEHIND_PER_DONOR = 4;

export interface GetOptions {
  manager: ManagerClient;
  dataset: string;
  /**
   * Where the bytes go: a stream gets them in order (backpressure respected); a file handle gets
   * each morsel written at its offset as soon as it is verified, so no donor waits for another.
   */
  sink: Writable | FileHandle;
  onProgress?: (doneBytes: number, totalBytes: number) => void;
  /** The map the read uses, once it arrived (its donors say which are throttled, and why). */
  onMap?: (map: DatasetMap) => void;
  onDonorFailure?: (donorId: string, error: FreeLoaderError) => void;
  /** Told once per donor left out of the read for a while (it stalled, or lost a hedge). */
  onDonorDropped?: (donorId: string, error: FreeLoaderError) => void;
  /** Morsels buffered or in flight for stream output (default: `reader.defaultWindow()`). */
  window?: number;
  /** Records where the read's time goes (`get --trace`). */
  trace?: ReadTrace;
  /**
   * A file sink is written with direct I/O where the disk takes it well (default true; see
   * OutputWriter); false keeps every write in the page cache.
   */
  directWrites?: boolean;
}

export interface GetSummary {
  map: DatasetMap;
  bytes: number;
  seconds: number;
  donorFailures: number;
  /** Each donor failure of the read, in order: which donor, and its error code. */
  failures: { donor: string; error: string }[];
  /** What each donor delivered to this read (bytes, and wall time it had requests in flight). */
  donors: Map<string, DonorRate>;
  /** Donors left out of the read for a while because they stalled. */
  dropped: string[];
  /** Morsels also asked of another copy (or the source) because their donor was slow, and won. */
  hedges: { asked: number; won: number };
  /**
   * TCP connection attempts the read made to each donor of the map: 0 for a donor the map does
   * not call live, which is routed around without being contacted.
   */
  connectionAttempts: Map<string, number>;
  /** From the start of the read to the first verified morsel (seconds). */
  firstMorselSeconds: number;
  /**
   * CPU this process spent during the read, every thread (hashing workers too), in seconds:
   * what a read costs the client machine, apart from start-up.
   */
  cpuSeconds: { user: number; system: number };
  /** How a file sink was written: 'direct I/O' or 'page cache (why)'; undefined for a stream. */
  writes?: string;
  /** What opened an encrypted dataset's morsels (see `native/morsel-cipher.ts`); undefined in clear. */
  cipher?: 'native' | 'node:crypto';
}

/** Read a whole dataset from its donors, verified, into `sink`. */
export async function getDataset(opts: GetOptions): Promise<GetSummary> {
  // Hash workers boot (a V8 isolate each, ~0.1–0.4 s on a busy machine) while the map arrives.
  const hashes = new HashPool();
  let map: DatasetMap;
  try {
    map = await fetchMap(opts.manager, opts.dataset);
  } catch (e) {
    await hashes.close();
    throw e;
  }
  opts.onMap?.(map);
  const fallback = sourceFallback(map);
  let donorFailures = 0;
  const failed: { donor: string; error: string }[] = [];
  const badCopies: BadCopy[] = [];
  const reader = new DatasetReader(map, {
    hashes,
    mapHashes: mapHashesOf(opts.manager, map),
    ...(fallback.read ? { fromSource: fallback.read } : {}),
    onDonorFailure: (donor, error) => {
      donorFailures++;
      failed.push({ donor, error: error.code });
      opts.onDonorFailure?.(donor, error);
    },
    onBadCopy: (donor, morsel) => badCopies.push({ donor, morsel }),
    ...(opts.onDonorDropped ? { onDonorDropped: opts.onDonorDropped } : {}),
    ...(opts.trace ? { trace: opts.trace } : {}),
    ...(isFileHandle(opts.sink) ? { writeBehind: WRITE_BEHIND_PER_DONOR } : {}),
  });
  const started = performance.now();
  opts.trace?.begin();
  const cpuAtStart = process.cpuUsage();
  let bytes = 0;
  let firstAt = 0;
  let writes: string | undefined;
  const connectionAttempts = new Map<string, number>();
  try {
    const progress = (n: number): void => {
      if (bytes === 0) firstAt = performance.now();
      bytes += n;
      opts.onProgress?.(bytes, map.dataset.sizeBytes);
    };
    if (isFileHandle(opts.sink)) {
      const fh = opts.sink;
      await fh.truncate(map.dataset.sizeBytes).catch(() => undefined); // devices cannot be truncated
      const output = await OutputWriter.open(
        fh,
        map.dataset.sizeBytes,
        (probe) => reader.alignSlots(probe),
        opts.directWrites ?? true,
      );
      try {
        await readUnordered(reader, async (m) => {
          try {
            await output.write(m.data, m.index * map.dataset.morselSize);
          } finally {
            m.release();
          }
          progress(m.data.length);
        });
      } finally {
        writes = output.mode;
        await output.close();
      }
    } else {
      const sink = opts.sink;
      const window = opts.window ?? reader.defaultWindow();
      for await (const morsel of readInOrder(reader, 0, reader.count, window)) {
        // The slot goes back to the pool only once the sink is done with its bytes.
        const flowing = sink.write(morsel.data, () => morsel.release());
        if (!flowing) await new Promise((r) => sink.once('drain', r));
        progress(morsel.data.length);
      }
    }
  } finally {
    // Counted before close(): closing the reader's own pools forgets them.
    for (const d of map.donors) connectionAttempts.set(d.id, reader.connectionAttempts(d.id));
    const closing = performance.now();
    await reader.close();
    await hashes.close();
    await fallback.close();
    opts.trace?.mark('close', -1, closing);
  }
  const seconds = (performance.now() - started) / 1000;
  const cpu = process.cpuUsage(cpuAtStart);
  const donors = reader.donorRates();
  await reportReadOutcome(opts.manager, map.dataset.id, donors, failed).catch(() => undefined);
  await reportBadCopies(opts.manager, map.dataset.id, badCopies).catch(() => undefined);
  return {
    map,
    bytes,
    seconds,
    donorFailures,
    failures: failed,
    donors,
    dropped: reader.droppedDonors(),
    hedges: reader.hedges(),
    connectionAttempts,
    firstMorselSeconds: (firstAt - started) / 1000,
    cpuSeconds: { user: cpu.user / 1e6, system: cpu.system / 1e6 },
    ...(writes ? { writes } : {}),
    ...(map.dataKey !== undefined ? { cipher: hashes.cipher } : {}),
  };
}

function isFileHandle(sink: Writable | FileHandle): sink is FileHandle {
  return (
    typeof (sink as FileHandle).fd === 'number' &&
    typeof (sink as FileHandle).truncate === 'function'
  );
}
