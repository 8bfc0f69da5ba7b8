import type { Command } from 'commander';
import {
  formatSize,
  parseSize,
  type CacheCut,
  type CacheStatus,
  type SourceStatsView,
} from '@freeloader/protocol';
import { measureSource } from '../../patching/source-probe.js';
import { OWN_READS_POLICY } from '../../client/own-reads-policy.js';
import { defaultManagerUrl } from '../paths.js';
import { userClient } from '../session.js';

const rate = (bps: number | null) => (bps === null ? '?' : `${(bps / 1e6).toFixed(1)} MB/s`);

/** `freeloader source probe|list`: the source registry behind the prefix model (seed 002). */
export function registerSource(program: Command): void {
  const source = program
    .command('source')
    .description('sources datasets are patched from: startup latency, patch rate, request size');

  source
    .command('probe <uri>')
    .description("measure a source's startup latency and parallel rate from here, and record it")
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--width <n>', 'parallel streams, like patching nodes', '4')
    .option('--bytes <size>', 'bytes each trial reads', '256MiB')
    .option('--no-record', 'only print, do not tell the manager')
    .action(
      async (
        uri: string,
        opts: { manager: string; width: string; bytes: string; record: boolean },
      ) => {
        const m = await measureSource(uri, {
          width: Number(opts.width),
          bytes: parseSize(opts.bytes),
          source: { policy: OWN_READS_POLICY },
          onTrial: (r) =>
            console.error(`  request ${formatSize(r.requestSize).padStart(9)}: ${rate(r.rate)}`),
        });
        console.log(
          `L ${m.latencyS.toFixed(3)} s, R_patch ${rate(m.patchRate)} at width ${m.width}, ` +
            `request size ${formatSize(m.requestSize)}`,
        );
        if (!opts.record) return;
        const client = await userClient(opts.manager);
        try {
          await client.request('POST', '/sources/measurements', {
            uri,
            latencyS: m.latencyS,
            width: m.width,
            requestSize: m.requestSize,
            ...(m.patchRate > 0 ? { patchRate: m.patchRate } : {}),
          });
        } finally {
          await client.close();
        }
      },
    );

  source
    .command('list')
    .description('what the manager knows about each source')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--json', 'print JSON')
    .action(async (opts: { manager: string; json?: boolean }) => {
      const client = await userClient(opts.manager);
      try {
        const list = await client.request<SourceStatsView[]>('GET', '/sources');
        if (opts.json) return void console.log(JSON.stringify(list, null, 2));
        for (const s of list) {
          const l = s.startupLatencyS === null ? '?' : `${s.startupLatencyS.toFixed(3)} s`;
          console.log(
            `${s.source}  L ${l}  R_patch ${rate(s.patchRate)}` +
              `${s.patchWidth ? ` (width ${s.patchWidth})` : ''}  import ${rate(s.importRate)}` +
              `  request ${formatSize(s.requestSize)}  (${s.samples} samples)`,
          );
        }
        if (list.length === 0) console.error('(no sources yet)');
      } finally {
        await client.close();
      }
    });
}

/** `freeloader cache`: space, eviction counts, prefixes; pin and cut datasets. */
export function registerCache(program: Command): void {
  const cache = program.command('cache').description('prefix cache: space, evictions, pins');
  cache
    .command('status')
    .description('space, watermarks, eviction counts, and each dataset with its model prefix')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--json', 'print JSON')
    .action(async (opts: { manager: string; json?: boolean }) => {
      const client = await userClient(opts.manager);
      try {
        const s = await client.request<CacheStatus>('GET', '/cache');
        if (opts.json) return void console.log(JSON.stringify(s, null, 2));
        const e = s.evictions;
        console.log(
          `${formatSize(s.usedBytes)} of ${formatSize(s.capacityBytes)} used ` +
            `(evict above ${s.highWatermark * 100} %, down to ${s.lowWatermark * 100} %); ` +
            `${e.trims} trims (${formatSize(e.trimmedBytes)}), ` +
            `${e.evictions} evictions (${formatSize(e.evictedBytes)}), ` +
            `${e.extensions} extensions (${formatSize(e.extendedBytes)})`,
        );
        for (const d of s.datasets) {
          console.log(
            `${d.pinned ? 'pinned ' : '       '}${formatSize(d.cachedBytes).padStart(10)} of ` +
              `${formatSize(d.sizeBytes).padEnd(10)} prefix ${formatSize(d.prefixBytes).padEnd(10)} ${d.path}`,
          );
        }
      } finally {
        await client.close();
      }
    });
  for (const [name, pinned] of [
    ['pin', true],
    ['unpin', false],
  ] as const) {
    cache
      .command(`${name} <dataset-id>`)
      .description(pinned ? 'never evict this dataset' : 'let eviction take this dataset again')
      .option('--manager <url>', 'manager URL', defaultManagerUrl())
      .action(async (id: string, opts: { manager: string }) => {
        const client = await userClient(opts.manager);
        try {
          await client.request('PUT', `/datasets/${id}/pin`, { pinned });
          console.error(`${name}ned ${id}`);
        } finally {
          await client.close();
        }
      });
  }
  cache
    .command('cut <dataset-id> <size>')
    .description("cut a dataset's cached part back to a prefix (admin; 0 evicts it)")
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .action(async (id: string, size: string, opts: { manager: string }) => {
      const client = await userClient(opts.manager);
      try {
        const cut = await client.request<CacheCut>('PUT', `/datasets/${id}/cached`, {
          cachedBytes: parseSize(size),
        });
        console.log(`${cut.kind}: ${formatSize(cut.fromBytes)} → ${formatSize(cut.toBytes)}`);
      } finally {
        await client.close();
      }
    });
}
