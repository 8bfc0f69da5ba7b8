import type { Command } from 'commander';
import { formatSize, type DatasetMap } from '@freeloader/protocol';
import type { DonorRate } from '../../client/dataset-reader.js';
import { getDataset } from '../../client/get-dataset.js';
import { ReadTrace } from '../../client/read-trace.js';
import { writeTrace } from '../trace-file.js';
import { cpuLine } from '../cpu-line.js';
import { OutputFile } from '../output-file.js';
import { defaultManagerUrl } from '../paths.js';
import { ProgressBar } from '../progress-bar.js';
import { rideOutManagerOutages, userClient } from '../session.js';
import { throttleNote, throttleReport } from '../throttle-note.js';

export function registerGet(program: Command): void {
  program
    .command('get <dataset>')
    .description(
      'read a dataset (path or id) in parallel from its donors, verified, to a file or stdout',
    )
    .option('-o, --output <file>', 'output file, or - for stdout (default: the dataset name)')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--window <morsels>', 'morsels buffered or in flight when writing to stdout')
    .option(
      '--stats',
      'print what each donor delivered (MB, busy seconds, MB/s) and the CPU the read took',
    )
    .option(
      '--buffered',
      'write the output file through the page cache (default: direct I/O where the disk takes it well)',
    )
    .option(
      '--trace <file>',
      'write where the read spent its time (per donor and worker phase) as JSON to <file>',
    )
    .action(
      async (
        dataset: string,
        opts: {
          output?: string;
          manager: string;
          window?: string;
          stats?: boolean;
          trace?: string;
          buffered?: boolean;
        },
      ) => {
        const trace = opts.trace ? new ReadTrace() : undefined;
        const client = await userClient(opts.manager);
        rideOutManagerOutages(client);
        const target = opts.output ?? dataset.split('/').pop()!;
        // A file is written at offsets as morsels arrive; stdout needs them in order. The file
        // is a temp one beside the target until the whole dataset is in (see OutputFile).
        const out = target === '-' ? null : await OutputFile.open(target);
        const file = out?.handle ?? null;
        let bar: ProgressBar | undefined;
        let why = '';
        try {
          const summary = await getDataset({
            manager: client,
            dataset,
            sink: file ?? process.stdout,
            ...(opts.window ? { window: Number(opts.window) } : {}),
            ...(trace ? { trace } : {}),
            ...(opts.buffered ? { directWrites: false } : {}),
            onMap: (map) => (why = throttleNote(map.donors.filter((d) => d.usable !== false))),
            onProgress: (done, total) => {
              bar ??= new ProgressBar(total, dataset.split('/').pop());
              bar.setNote(why);
              bar.update(done);
            },
            onDonorFailure: (donor, err) =>
              console.error(`\nwarning: donor ${donor}: ${err.message} (retrying elsewhere)`),
            onDonorDropped: (donor, err) =>
              console.error(`\nwarning: donor ${donor} left out of the read: ${err.message}`),
          });
          bar?.update(summary.bytes, undefined, true);
          bar?.done();
          await out?.commit();
          const mbps = summary.bytes / 1e6 / Math.max(summary.seconds, 1e-6);
          console.error(
            `${formatSize(summary.bytes)} (${summary.bytes} bytes) in ${summary.seconds.toFixed(2)} s, ` +
              `${mbps.toFixed(1)} MB/s, ${summary.donorFailures} donor failure(s)` +
              (file ? ` → ${target}` : ''),
          );
          if (opts.stats) {
            // The summary's one decimal cannot tell 11.949 MB/s from 11.9: benchmarks read this.
            console.error(`read time ${summary.seconds.toFixed(4)} s, ${mbps.toFixed(3)} MB/s`);
            console.error(`first morsel after ${summary.firstMorselSeconds.toFixed(3)} s`);
            console.error(cpuLine(summary.cpuSeconds, summary.bytes));
            if (summary.writes) console.error(`output written by ${summary.writes}`);
            if (summary.cipher) console.error(`morsels opened by ${cipherName(summary.cipher)}`);
            console.error(donorTable(summary.map, summary.donors));
            console.error(attemptsLine(summary.map, summary.connectionAttempts));
            const throttled = throttleReport(
              summary.map.donors.map((d) => ({ ...d, name: hostOf(d.url) })),
            );
            if (throttled) console.error(throttled);
          }
          if (trace && opts.trace) console.error(await writeTrace(opts.trace, trace));
        } finally {
          await out?.discard();
          await client.close();
        }
      },
    );
}

/** One line per donor, slowest last: address, MB delivered, seconds busy, MB/s while busy. */
function donorTable(map: DatasetMap, donors: Map<string, DonorRate>): string {
  const names = new Map(map.donors.map((d) => [d.id, hostOf(d.url)]));
  const rows = [...donors]
    .map(([id, r]) => ({ name: names.get(id) ?? id, ...r }))
    .sort((a, b) => a.busyMs - b.busyMs)
    .map(
      (r) =>
        `  ${r.name.padEnd(20)} ${(r.bytes / 1e6).toFixed(1).padStart(9)} MB ` +
        `${(r.busyMs / 1000).toFixed(2).padStart(7)} s ` +
        `${(r.bytes / 1e3 / Math.max(r.busyMs, 1)).toFixed(1).padStart(7)} MB/s`,
    );
  return ['donor                   delivered     busy     rate', ...rows].join('\n');
}

/**
 * TCP connections the read attempted per donor, e.g. `connection attempts: 10.0.0.2:7070 1,
 * 10.0.0.3:7070 0`: a donor killed mid-read shows at most one more than it had (issue 15).
 */
function attemptsLine(map: DatasetMap, attempts: Map<string, number>): string {
  const names = new Map(map.donors.map((d) => [d.id, hostOf(d.url)]));
  const parts = [...attempts].map(([id, n]) => `${names.get(id) ?? id} ${n}`);
  return `connection attempts: ${parts.join(', ')}`;
}

const hostOf = (url: string): string => url.replace(/^https?:\/\//, '');

/** How `get --stats` names what opened the morsels (benchmarks quote the line). */
function cipherName(cipher: 'native' | 'node:crypto'): string {
  return cipher === 'native'
    ? 'the data-path addon (AES-256-GCM in place)'
    : 'node:crypto (addon not built)';
}
