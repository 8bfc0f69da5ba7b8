import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import type { Command } from 'commander';
import { formatSize } from '@freeloader/protocol';
import { getDataset } from '../../client/get-dataset.js';
import { defaultManagerUrl } from '../paths.js';
import { ProgressBar } from '../progress-bar.js';
import { userClient } from '../session.js';

export function registerGet(program: Command): void {
  program
    .command('get <dataset>')
    .description(
      'read a dataset (path or id) in parallel from its donors, verified, to a file or stdout',
    )
    .option('-o, --output <file>', 'output file, or - for stdout (default: the dataset name)')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--window <morsels>', 'morsels buffered or in flight (default W·(S+1))')
    .action(
      async (dataset: string, opts: { output?: string; manager: string; window?: string }) => {
        const client = await userClient(opts.manager);
        const target = opts.output ?? dataset.split('/').pop()!;
        const toStdout = target === '-';
        const sink = toStdout ? process.stdout : createWriteStream(target);
        let bar: ProgressBar | undefined;
        try {
          const summary = await getDataset({
            manager: client,
            dataset,
            sink,
            ...(opts.window ? { window: Number(opts.window) } : {}),
            onProgress: (done, total) => {
              bar ??= new ProgressBar(total, dataset.split('/').pop());
              bar.update(done);
            },
            onDonorFailure: (donor, err) =>
              console.error(`\nwarning: donor ${donor}: ${err.message} (retrying elsewhere)`),
          });
          bar?.update(summary.bytes, undefined, true);
          bar?.done();
          if (!toStdout) {
            sink.end();
            await finished(sink);
          }
          const mbps = summary.bytes / 1e6 / Math.max(summary.seconds, 1e-6);
          console.error(
            `${formatSize(summary.bytes)} (${summary.bytes} bytes) in ${summary.seconds.toFixed(2)} s, ` +
              `${mbps.toFixed(1)} MB/s, ${summary.donorFailures} donor failure(s)${toStdout ? '' : ` → ${target}`}`,
          );
        } catch (e) {
          if (!toStdout) sink.destroy();
          throw e;
        } finally {
          await client.close();
        }
      },
    );
}
