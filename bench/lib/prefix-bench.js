import { managerApi } from './freeloader-lan.js';
import { join } from 'node:path';
import { fileDigest } from './dataset.js';
import { startDelayProxy } from './delay-proxy.js';
import { parseGetSummary, runFreeLoader } from './freeloader.js';
import { startNginx } from './nginx.js';
import { exec } from './processes.js';

/** The slow source of the prefix figures: nginx `limit_rate` per connection (MiB/s)… */
export const SOURCE_LIMIT_MIB_S = 4;
/** …behind a proxy adding this much per request (ms), standing in for WAN latency (no netem). */
export const SOURCE_DELAY_MS = Number(process.env.BENCH_SOURCE_DELAY_MS ?? 300);

/**
 * A `bytes` dataset served from the testbed's source host the way seed 002 sees a remote archive:
 * per-connection rate limit and per-request delay (the source link itself is left fast).
 *
 * @param {import('./context.js').BenchContext} ctx
 * @param {import('./testbed.js').Testbed} tb
 * @param {number} bytes
 * @param {string} work
 * @returns {Promise<{ ds: Awaited<ReturnType<import('./context.js').BenchContext['dataset']>>, url: string, stop: () => Promise<void> }>}
 */
export async function startSlowSource(ctx, tb, bytes, work) {
  await tb.shape(tb.source, { rateMbit: 1000 });
  const ds = await ctx.dataset(bytes);
  const nginx = await startNginx(tb.source, {
    root: ds.dir,
    workDir: join(work, 'nginx'),
    limitRate: `${SOURCE_LIMIT_MIB_S}m`,
  });
  const source = await startDelayProxy(tb.source, {
    target: nginx.base,
    port: 8081,
    delayMs: SOURCE_DELAY_MS,
    workDir: work,
  });
  const stop = async () => {
    await source.stop();
    await nginx.stop();
  };
  return { ds, url: source.url(ds.name), stop };
}

/** `freeloader get` prints "… in S s, R MB/s, …". */

/**
 * GET an /api/v1 path on the manager from the client host, as the signed-in admin CLI.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @param {string} path e.g. '/patch-sessions'
 * @returns {Promise<any>}
 */
export async function api(tb, fl, path) {
  return managerApi(tb, fl, path);
}

/**
 * `freeloader get` of `name` on the client into `out`, checked against `sha256`; returns the
 * client's rate. `env` forces the patch width and request size (FREELOADER_PATCH_*).
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @param {string} name
 * @param {string} out
 * @param {string} sha256
 * @param {NodeJS.ProcessEnv} [env]
 * @returns {Promise<{ seconds: number, mbps: number }>}
 */
export async function timedGet(tb, fl, name, out, sha256, env = {}) {
  const got = await runFreeLoader(tb.client, ['get', name, '-o', out, '--manager', fl.url], {
    home: fl.cliHome,
    env,
    timeoutMs: 900_000,
  });
  const summary = parseGetSummary(got.stderr);
  const digest = await fileDigest(out);
  await exec(tb.client, 'rm', ['-f', out]);
  if (digest.sha256 !== sha256) throw new Error(`get ${name}: output differs from the source`);
  return summary;
}

/**
 * The latest patch session of a dataset once every node reported: its aggregate rate (the sum
 * of the nodes' download-and-shuffle rates, MB/s) and width. Null when none finished in time.
 *
 * @param {import('./testbed.js').Testbed} tb
 * @param {import('./freeloader-lan.js').FreeLoaderLan} fl
 * @param {string} datasetId
 * @returns {Promise<{ mbps: number, width: number, bytes: number } | null>}
 */
export async function sessionRate(tb, fl, datasetId) {
  for (let i = 0; i < 40; i++) {
    const sessions = await api(tb, fl, '/patch-sessions');
    const s = sessions.find((/** @type {{ datasetId: string }} */ x) => x.datasetId === datasetId);
    if (s && s.state === 'done' && s.rate) {
      return { mbps: s.rate / 1e6, width: s.nodes.length, bytes: s.bytes };
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return null;
}

/**
 * aria2c from one host with `p` connections to one server and pieces of `pieceBytes` (each
 * connection asks for large ranges): the single-host parallel download FreeLoader's collective
 * download is compared with.
 *
 * @param {import('./processes.js').Host} host
 * @param {string} url
 * @param {number} p
 * @param {number} pieceBytes
 * @param {import('./dataset.js').Dataset} ds
 * @param {string} outDir
 * @returns {Promise<{ mbps: number, seconds: number }>}
 */
export async function aria2Parallel(host, url, p, pieceBytes, ds, outDir) {
  const args = [
    '--no-conf=true',
    '--file-allocation=none',
    '--allow-overwrite=true',
    '--auto-file-renaming=false',
    '--console-log-level=warn',
    '--summary-interval=0',
    '--download-result=hide',
    `--min-split-size=${Math.max(1, Math.round(pieceBytes / 2 ** 20))}M`,
    `--piece-length=${Math.max(1, Math.round(pieceBytes / 2 ** 20))}M`,
    ...['-s', String(p), '-x', String(Math.min(16, p)), '-j', '1', '-d', outDir, '-o', 'aria'],
    url,
  ];
  const t0 = performance.now();
  await exec(host, 'aria2c', args);
  const seconds = (performance.now() - t0) / 1000;
  const got = await fileDigest(join(outDir, 'aria'));
  await exec(host, 'rm', ['-f', join(outDir, 'aria')]);
  if (got.sha256 !== ds.sha256) throw new Error('aria2c: output differs from the source');
  return { seconds, mbps: ds.bytes / 1e6 / seconds };
}
