import type { Command } from 'commander';
import {
  formatSize,
  type DatasetPlacement,
  type DatasetView,
  type Listing,
} from '@freeloader/protocol';
import { formatAccess } from './sharing.js';
import { copiesColumn, datasetHealth, type DatasetHealth } from '../dataset-health.js';
import { defaultManagerUrl } from '../paths.js';
import { userClient } from '../session.js';

export function registerNamespace(program: Command): void {
  program
    .command('ls [path]')
    .description('list folders and datasets in the namespace')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--json', 'print JSON')
    .action(async (path: string | undefined, opts: { manager: string; json?: boolean }) => {
      const client = await userClient(opts.manager);
      try {
        const query = path ? `?path=${encodeURIComponent(trimSlashes(path))}` : '';
        const listing = await client.request<Listing>('GET', `/namespace${query}`);
        if (opts.json) {
          console.log(JSON.stringify(listing, null, 2));
          return;
        }
        for (const f of listing.folders)
          console.log(
            `${'folder'.padEnd(9)} ${''.padStart(10)}  ${''.padEnd(6)}  ${lastSegment(f.path)}/`,
          );
        for (const d of listing.datasets) console.log(formatDatasetLine(d));
        if (listing.folders.length + listing.datasets.length === 0) console.error('(empty)');
      } finally {
        await client.close();
      }
    });

  program
    .command('stat <path>')
    .description('show one dataset: size, cache, placement policy, donors and health')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--json', 'print JSON (the dataset view plus donors and health)')
    .action(async (path: string, opts: { manager: string; json?: boolean }) => {
      const client = await userClient(opts.manager);
      try {
        const d = await client.request<DatasetView>(
          'GET',
          `/datasets/by-path?path=${encodeURIComponent(trimSlashes(path))}`,
        );
        const placement = await client.request<DatasetPlacement>(
          'GET',
          `/datasets/${d.id}/placement`,
        );
        const health = datasetHealth(d, placement);
        if (opts.json) {
          console.log(JSON.stringify({ ...d, health }, null, 2));
          return;
        }
        for (const line of formatStat(d, health)) console.log(line);
      } finally {
        await client.close();
      }
    });
}

/**
 * `stat`'s text: one labeled fact a line, then one line per donor.
 *
 * @example
 *   formatStat(view, health)
 *   // ['path           climate/tas.nc', …, 'donors         2 of 2 live',
 *   //  '  donor-1      live     2 morsels', …]
 */
export function formatStat(d: DatasetView, health: DatasetHealth): string[] {
  const rows: [string, string][] = [
    ['path', d.path],
    ['id', d.id],
    ['state', d.state + (d.error ? ` (${d.error})` : '')],
    ['health', health.summary],
    ['copies', health.copies],
    ['size', `${formatSize(d.sizeBytes)} (${d.sizeBytes} bytes)`],
    ['cached', `${formatSize(d.cachedBytes)} (${pct(d.cachedBytes, d.sizeBytes)})`],
    ['placement', d.policy ?? '-'],
    ['donors', `${health.donorsLive} of ${health.donorsTotal} live`],
  ];
  const lines = rows.map(([k, v]) => `${k.padEnd(14)} ${v}`);
  for (const x of health.donors) {
    const morsels = `${x.morsels} morsel${x.morsels === 1 ? '' : 's'}`;
    lines.push(`  ${x.name.padEnd(12)} ${x.state.padEnd(8)} ${morsels}`);
  }
  const more: [string, string][] = [
    ['morsel size', formatSize(d.morselSize)],
    ['source', d.sourceUri ?? '-'],
    ['etag', d.etag ?? '-'],
    ['last modified', d.lastModified ?? '-'],
    ['created', d.createdAt],
    ['last access', d.lastAccessAt ?? '-'],
  ];
  return [...lines, ...more.map(([k, v]) => `${k.padEnd(14)} ${v}`), ...formatAccess(d, d.path)];
}

/**
 * One `ls` line: state, size, live copies of the worst morsel over the copies wanted, name.
 *
 * @example formatDatasetLine(view) // 'ready        3 MiB  2/2     a.bin'
 */
export function formatDatasetLine(d: DatasetView): string {
  return `${d.state.padEnd(9)} ${formatSize(d.sizeBytes).padStart(10)}  ${copiesColumn(d).padEnd(6)}  ${lastSegment(d.path)}`;
}

function lastSegment(path: string): string {
  return path.split('/').pop() ?? path;
}

function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

function pct(part: number, whole: number): string {
  return whole === 0 ? '100%' : `${((100 * part) / whole).toFixed(1)}%`;
}

export function registerRemove(program: Command): void {
  program
    .command('rm <dataset>')
    .description('delete a dataset (path or id): donors drop its morsels, its space is freed')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .action(async (dataset: string, opts: { manager: string }) => {
      const client = await userClient(opts.manager);
      try {
        const id = UUID.test(dataset)
          ? dataset
          : (
              await client.request<DatasetView>(
                'GET',
                `/datasets/by-path?path=${encodeURIComponent(trimSlashes(dataset))}`,
              )
            ).id;
        const res = await client.request<{ deleted: boolean }>('DELETE', `/datasets/${id}`);
        console.error(
          res.deleted
            ? `deleted ${dataset}`
            : `deleting ${dataset} (donors are dropping its morsels)`,
        );
      } finally {
        await client.close();
      }
    });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
