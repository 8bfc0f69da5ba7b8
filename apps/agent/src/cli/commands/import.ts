import type { Command } from 'commander';
import {
  FreeLoaderError,
  formatSize,
  type DatasetView,
  type ImportRequest,
  type ImportResponse,
  type SourceProbe,
} from '@freeloader/protocol';
import type { ManagerClient } from '../../manager-client.js';
import { defaultManagerUrl } from '../paths.js';
import { ProgressBar } from '../progress-bar.js';
import { rideOutManagerOutages, userClient } from '../session.js';
import { throttleNote, type DonorThrottle } from '../throttle-note.js';
import { describePlacement, policyFields, type PolicyOptions } from './import-policy.js';
import { describeCopies, replicaFields, type ReplicaOptions } from './import-replicas.js';

interface ImportResult {
  dataset: DatasetView;
  probe: SourceProbe;
  plan?: ImportResponse['plan'];
}

interface TransferRow extends DonorThrottle {
  agentId: string | null;
  datasetId: string | null;
  state: string;
  doneBytes: number;
  totalBytes: number;
  rate: number;
}

export function registerImport(program: Command): void {
  program
    .command('import <uri>')
    .description('import a dataset from a URI: donors fetch their stripes from the source')
    .option('--name <path>', 'namespace path, e.g. climate/tas.nc (default: the file name)')
    .option('--width <n>', 'stripe width W (donors read in parallel)')
    .option('--stripe-size <n>', 'stripe size S in morsels')
    .option('--policy <name>', 'placement: round-robin, predictive or asymmetric (default: auto)')
    .option('--host <agent>', "asymmetric: this workstation's agent (id or --dir of the agent)")
    .option(
      '--local-share <f>',
      'asymmetric: fraction (0.3) or local:remote ratio (3:8) on the host',
    )
    .option(
      '--replicas <n>',
      "copies of each morsel, each on another donor (default: the manager's REPLICAS_DEFAULT, 2)",
    )
    .option(
      '--availability <p>',
      "target availability (e.g. 0.999): the manager picks the copy count from its donors' failure and repair rates",
    )
    .option(
      '--no-encrypt',
      'store the morsels in clear on donors (public data only; by default donors hold ciphertext)',
    )
    .option('--wait', 'wait until the import finishes, with a progress bar')
    .option('--json', 'print the dataset, probe and plan as JSON on stdout (for scripts)')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .action(
      async (
        uri: string,
        opts: {
          name?: string;
          width?: string;
          stripeSize?: string;
          wait?: boolean;
          json?: boolean;
          encrypt: boolean;
          manager: string;
        } & PolicyOptions &
          ReplicaOptions,
      ) => {
        const client = await userClient(opts.manager);
        rideOutManagerOutages(client);
        try {
          const body: ImportRequest = {
            uri,
            ...(opts.name ? { name: opts.name } : {}),
            ...(opts.width ? { width: Number(opts.width) } : {}),
            ...(opts.stripeSize ? { stripeSize: Number(opts.stripeSize) } : {}),
            ...(await policyFields(opts)),
            ...replicaFields(opts),
            ...(opts.encrypt ? {} : { encrypt: false }),
          };
          const res = await client.request<ImportResult>('POST', '/datasets', body);
          console.error(
            `importing ${res.dataset.path}: ${formatSize(res.probe.size)}, ` +
              `etag ${res.probe.etag ?? '-'}, ranges ${res.probe.acceptsRanges ? 'yes' : 'no (one donor streams it)'}`,
          );
          const placement = describePlacement(res.plan);
          if (placement) console.error(placement);
          const copies = describeCopies(res.plan);
          if (copies) console.error(copies);
          const cached = res.plan?.cacheBytes;
          if (cached !== undefined && cached < res.probe.size) {
            // Seed 002: the cache was full, so only the model prefix is kept.
            console.error(
              `cache full: caching a ${formatSize(cached)} prefix; the rest is patched from the source when read`,
            );
          }
          // Labeled: a bare UUID in a terminal says nothing. Scripts take --json.
          if (!opts.json) console.log(`dataset id: ${res.dataset.id}`);
          const done = opts.wait ? await waitForImport(client, res.dataset) : res.dataset;
          if (opts.json) console.log(JSON.stringify({ ...res, dataset: done }, null, 2));
        } finally {
          await client.close();
        }
      },
    );
}

/** Poll the transfers of one dataset until it is ready or failed, drawing a progress bar. */
export async function waitForImport(
  client: ManagerClient,
  dataset: DatasetView,
): Promise<DatasetView> {
  const bar = new ProgressBar(dataset.sizeBytes, dataset.path.split('/').pop());
  const started = performance.now();
  for (;;) {
    const [view, rows] = await Promise.all([
      client.request<DatasetView>('GET', `/datasets/${dataset.id}`),
      client.request<TransferRow[]>('GET', `/transfers?datasetId=${dataset.id}`),
    ]);
    const done = rows.reduce((s, r) => s + r.doneBytes, 0);
    // Every copy's donors fetch their morsels: progress is over all copies' bytes, shown on the
    // dataset's scale (the bar counts the dataset, not n times it).
    const total = rows.reduce((s, r) => s + r.totalBytes, 0);
    const share = total > 0 ? Math.min(1, done / total) : 0;
    const rate = rows.filter((r) => r.state === 'running').reduce((s, r) => s + r.rate, 0);
    bar.setNote(throttleNote(runningDonors(rows)));
    bar.update(
      Math.round(share * dataset.sizeBytes),
      (rate * dataset.sizeBytes) / (total || 1) || undefined,
    );
    if (view.state === 'ready') {
      bar.update(dataset.sizeBytes, undefined, true);
      bar.done();
      const s = (performance.now() - started) / 1000;
      console.error(
        `ready: ${formatSize(view.sizeBytes)} in ${s.toFixed(1)} s (${(view.sizeBytes / 1e6 / s).toFixed(1)} MB/s)`,
      );
      return view;
    }
    if (view.state === 'failed') {
      bar.done();
      throw new FreeLoaderError('SOURCE_ERROR', `import failed: ${view.error ?? 'unknown error'}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
}

/** The agents running this import's jobs, once each (an agent may run several). */
function runningDonors(rows: readonly TransferRow[]): TransferRow[] {
  const byAgent = new Map<string, TransferRow>();
  for (const r of rows) if (r.state === 'running' && r.agentId) byAgent.set(r.agentId, r);
  return [...byAgent.values()];
}
