import { createHash } from 'node:crypto';
import {
  FreeLoaderError,
  dataKeyOf,
  donorsOfMorsel,
  morselCount,
  type ImportJobPayload,
} from '@freeloader/protocol';
import type { Source, SourceInfo } from '@freeloader/sources';
import { DonorPools } from '../client/donor-pool.js';
import { BoundedTasks } from './bounded-tasks.js';
import type { ImportDeps } from './import-deps.js';
import type { JobContext } from './job-runner.js';
import { ProgressReporter } from './progress-reporter.js';
import { sealInPlace } from '../native/morsel-cipher.js';

/** Morsel PUTs in flight while distributing a streamed source (bounds memory to this × morsel). */
const DISTRIBUTE_IN_FLIGHT = 8;

/**
 * Import from a source without Range support, on purpose rather than by accident: this donor
 * reads the object once, front to back, cuts it into morsels and sends each to every donor the
 * placement names (storing its own locally). Memory stays bounded by DISTRIBUTE_IN_FLIGHT morsels.
 */
export async function streamImport(
  deps: ImportDeps,
  datasetId: string,
  payload: ImportJobPayload,
  source: Source,
  expect: SourceInfo,
  ctx: JobContext,
): Promise<Record<string, unknown>> {
  const me = deps.agentId();
  const { morselSize, writeCapability } = payload;
  if (!writeCapability) {
    throw new FreeLoaderError('BAD_REQUEST', 'a streamed import job needs a write capability');
  }
  const urls = new Map(payload.donors.map((d) => [d.id, d.url]));
  const total = morselCount(payload.source.size, morselSize);
  const pools = new DonorPools(2);
  const deliveries = new BoundedTasks(DISTRIBUTE_IN_FLIGHT);
  const reporter = new ProgressReporter(ctx);
  await deps.store.create(datasetId, { morselSize });

  const key = payload.dataKey === undefined ? undefined : dataKeyOf(payload.dataKey);
  const deliver = async (index: number, data: Buffer): Promise<void> => {
    // Encrypted dataset: every donor gets (and hashes) the same sealed bytes.
    const tag = key && sealInPlace(key, datasetId, index, data).toString('hex');
    const sha256 = createHash('sha256').update(data).digest('hex');
    for (const donor of donorsOfMorsel(payload.extents, index)) {
      if (donor === me) {
        await deps.store.put(datasetId, index, data, sha256);
      } else {
        const url = urls.get(donor);
        if (!url) throw new FreeLoaderError('NO_DONORS', `no address for donor ${donor}`);
        await deps.admit?.(data.length, 'out', ctx.signal);
        await pools.putMorsel(url, datasetId, index, data, sha256, writeCapability, ctx.signal);
      }
      reporter.add(data.length, { index, sha256, ...(tag ? { tag } : {}) }, donor);
    }
  };

  let index = 0;
  let pending: Buffer = Buffer.alloc(0);
  // Waits for a free delivery slot (bounding memory); throws once a delivery has failed.
  const dispatch = (chunk: Buffer): Promise<void> => {
    const at = index++;
    return deliveries.add(() => deliver(at, chunk));
  };

  try {
    const stream = await source.readAll(expect, ctx.signal);
    for await (const piece of stream as AsyncIterable<Buffer>) {
      // Not reading on is what slows the source down (TCP back-pressure); a pause holds it.
      await deps.admit?.(piece.length, 'in', ctx.signal);
      pending = pending.length === 0 ? piece : Buffer.concat([pending, piece]);
      while (pending.length >= morselSize) {
        await dispatch(Buffer.from(pending.subarray(0, morselSize)));
        pending = pending.subarray(morselSize);
      }
    }
    if (pending.length > 0) await dispatch(Buffer.from(pending));
    await deliveries.drain();
    if (index !== total) {
      throw new FreeLoaderError(
        'SOURCE_CHANGED',
        `source sent ${index} morsels, expected ${total}`,
      );
    }
    await reporter.flush();
    return { morsels: total, bytes: payload.source.size, mode: 'stream' };
  } finally {
    await deliveries.settle();
    await pools.close();
  }
}
