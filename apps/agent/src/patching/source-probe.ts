import { MiB } from '@freeloader/protocol';
import { openSource, type SourceInfo, type SourceOptions } from '@freeloader/sources';

export interface RequestSizeRate {
  requestSize: number;
  /** Aggregate bytes/s of `width` parallel streams at this request size. */
  rate: number;
}

export interface SourceMeasured {
  /** L: median time to learn nothing but the object's size (a probe), new connection each. */
  latencyS: number;
  width: number;
  rates: RequestSizeRate[];
  /** R_patch: the best aggregate rate. */
  patchRate: number;
  /** Smallest request size within 10 % of the best rate. */
  requestSize: number;
}

export interface MeasureOptions {
  /** Parallel streams, like patching nodes (default 4). */
  width?: number;
  /** Bytes each trial moves in total (default 256 MiB, capped by the object's size). */
  bytes?: number;
  /** Request sizes to try (default 1, 16, 64, 256 MiB: seed 002 Fig. 4). */
  requestSizes?: number[];
  source?: SourceOptions;
  onTrial?: (r: RequestSizeRate) => void;
}

/**
 * Measure a source the way the prefix model needs it (seed 002 §5.3): L as the overhead of a
 * request that transfers nothing, and the aggregate rate of `width` streams each reading its
 * own contiguous part in requests of a given size — every trial moves the same bytes, so only
 * the request size changes (seed Fig. 4).
 *
 * @example const m = await measureSource('https://data.example.org/run.h5', { width: 4 });
 */
export async function measureSource(
  uri: string,
  opts: MeasureOptions = {},
): Promise<SourceMeasured> {
  const width = opts.width ?? 4;
  const latencies: number[] = [];
  let info: SourceInfo | undefined;
  for (let i = 0; i < 3; i++) {
    const src = openSource(uri, { ...opts.source, connections: 1 });
    const started = performance.now();
    try {
      info = await src.probe();
    } finally {
      latencies.push((performance.now() - started) / 1000);
      await src.close();
    }
  }
  latencies.sort((a, b) => a - b);
  if (!info) throw new Error('the source was never probed');
  const probed = info;
  const size = probed.size;
  const total = Math.min(opts.bytes ?? 256 * MiB, size);
  const perStream = Math.floor(total / width);
  const rates: RequestSizeRate[] = [];
  if (probed.acceptsRanges && perStream > 0) {
    for (const requestSize of (opts.requestSizes ?? [1, 16, 64, 256].map((n) => n * MiB)).filter(
      (r) => r <= perStream,
    )) {
      const src = openSource(uri, { ...opts.source, connections: width });
      const started = performance.now();
      try {
        await Promise.all(
          Array.from({ length: width }, async (_, w) => {
            const base = w * perStream;
            for (let at = 0; at < perStream; at += requestSize) {
              const end = base + Math.min(perStream, at + requestSize);
              const stream = await src.streamRange(base + at, end, probed);
              for await (const chunk of stream as AsyncIterable<Buffer>) void chunk;
            }
          }),
        );
      } finally {
        await src.close();
      }
      const r = { requestSize, rate: (perStream * width) / ((performance.now() - started) / 1000) };
      rates.push(r);
      opts.onTrial?.(r);
    }
  }
  const best = Math.max(0, ...rates.map((r) => r.rate));
  return {
    latencyS: latencies[1]!,
    width,
    rates,
    patchRate: best,
    requestSize: rates.find((r) => r.rate >= 0.9 * best)?.requestSize ?? 64 * MiB,
  };
}
