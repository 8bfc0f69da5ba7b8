import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileDigest } from './dataset.js';
import { startNginx } from './nginx.js';
import { exec, LOOPBACK } from './processes.js';
import { cpuTimes } from './proc-stat.js';

/**
 * One measured read. MB = 10^6 bytes throughout, as in the seed paper.
 *
 * @typedef {object} Read
 * @property {number} bytes
 * @property {number} seconds
 * @property {number} mbps MB/s
 * @property {{ user: number, system: number }} [cpu] the reading client's CPU seconds, when measured
 */

/**
 * Read `url` with one curl stream from `host` to /dev/null (the seed's wget baseline); the rate is
 * curl's own `%{speed_download}` (bytes over the whole transfer, connection set-up included).
 *
 * @param {import('./processes.js').Host} host
 * @param {string} url
 * @param {{ expectBytes?: number, cpu?: boolean }} [opts] `cpu`: also curl's own CPU seconds
 *   (GNU time)
 * @returns {Promise<Read>}
 * @example
 *   const r = await curlRead(tb.client, source.url(ds.name), { expectBytes: ds.bytes });
 */
export async function curlRead(host, url, opts = {}) {
  const fmt = '%{http_code} %{size_download} %{time_total} %{speed_download}';
  const args = ['-sS', '--fail', '-o', '/dev/null', '-w', fmt, url];
  const { stdout, stderr } = opts.cpu
    ? await exec(host, timedBinary(), ['-f', TIME_FORMAT, 'curl', ...args])
    : await exec(host, 'curl', args);
  const [code, size = NaN, time = NaN, speed = NaN] = stdout.trim().split(' ').map(Number);
  if (code !== 200) throw new Error(`curl ${url}: HTTP ${code}`);
  if (opts.expectBytes !== undefined && size !== opts.expectBytes) {
    throw new Error(`curl ${url}: got ${size} bytes, expected ${opts.expectBytes}`);
  }
  const read = { bytes: size, seconds: time, mbps: speed / 1e6 };
  return opts.cpu ? { ...read, cpu: cpuOf('curl', stderr) } : read;
}

/** GNU time (Debian package `time`): a baseline client's own CPU seconds, read when it exits. */
const GNU_TIME = '/usr/bin/time';
/** What `/usr/bin/time -f` prints on its last stderr line: user and system CPU seconds. */
const TIME_FORMAT = 'client-cpu %U %S';
const TIME_LINE = /client-cpu ([\d.]+) ([\d.]+)\s*$/;

/** GNU time's path, or a clear error when it is missing. */
function timedBinary() {
  if (!existsSync(GNU_TIME))
    throw new Error(`clients' CPU is read with GNU time: install ${GNU_TIME}`);
  return GNU_TIME;
}

/**
 * The user and system seconds GNU time printed last on `stderr`.
 * @param {string} tool @param {string} stderr
 */
function cpuOf(tool, stderr) {
  const times = TIME_LINE.exec(stderr);
  if (!times) throw new Error(`${tool}: no CPU times from ${GNU_TIME}: ${stderr}`);
  return { user: Number(times[1]), system: Number(times[2]) };
}

/**
 * Download `dataset` with aria2c from `host`, split over the `mirrors` (one connection each,
 * 1 MiB minimum piece, like FreeLoader's morsels), and verify the sha256. The rate is wall-clock
 * bytes / seconds of the whole aria2c run, as a user would see it; `cpu` is aria2c's own user and
 * system time (GNU time), for the CPU per GiB set against FreeLoader's client in the same run.
 *
 * @param {import('./processes.js').Host} host
 * @param {string[]} mirrors one URL per mirror, all serving the same file
 * @param {import('./dataset.js').Dataset} dataset
 * @param {string} outDir where aria2c writes (the file is deleted afterwards)
 * @returns {Promise<Read>}
 */
export async function aria2Read(host, mirrors, dataset, outDir) {
  const w = String(mirrors.length);
  const args = [
    '--no-conf=true',
    '--file-allocation=none',
    '--allow-overwrite=true',
    '--auto-file-renaming=false',
    '--console-log-level=warn',
    '--summary-interval=0',
    '--download-result=hide',
    '--min-split-size=1M',
    ...['-s', w, '-x', '1', '-j', '1', '-d', outDir, '-o', 'out'],
    ...mirrors,
  ];
  const out = join(outDir, 'out');
  const t0 = performance.now();
  const { stderr } = await exec(host, timedBinary(), ['-f', TIME_FORMAT, 'aria2c', ...args]);
  const seconds = (performance.now() - t0) / 1000;
  const cpu = cpuOf('aria2c', stderr);
  try {
    const got = await fileDigest(out);
    if (got.bytes !== dataset.bytes || got.sha256 !== dataset.sha256) {
      throw new Error(
        `aria2c: downloaded ${got.bytes} bytes with sha256 ${got.sha256}, expected ${dataset.sha256}`,
      );
    }
  } finally {
    await rm(out, { force: true });
  }
  return { bytes: dataset.bytes, seconds, mbps: dataset.bytes / 1e6 / seconds, cpu };
}

/**
 * Read `dataset` with curl from nginx on loopback in the root namespace (no shaping at all):
 * the ceiling this machine's HTTP stack reaches, for the 1 GB/s comparison.
 *
 * @param {import('./dataset.js').Dataset} dataset
 * @param {string} root directory holding the dataset
 * @param {string} workDir nginx's working directory
 * @returns {Promise<Read>}
 */
export async function loopbackRead(dataset, root, workDir) {
  const web = await startNginx(LOOPBACK, { root, workDir, port: await freePort() });
  try {
    return await curlRead(LOOPBACK, web.url(dataset.name), { expectBytes: dataset.bytes });
  } finally {
    await web.stop();
  }
}

/**
 * `runs` curl reads of `dataset` from one nginx on loopback, as {@link loopbackRead}, each with
 * what it cost per GiB in the shape of a FreeLoader read's ({@link ReadCost}): curl's CPU (GNU
 * time) as the client's, nginx's (master and worker, from /proc) as the one donor's. The floor a
 * verified read's CPU is set against: an unverified transfer through the same loopback stack.
 *
 * @param {import('./dataset.js').Dataset} dataset
 * @param {string} root directory holding the dataset
 * @param {string} workDir nginx's working directory
 * @param {number} runs
 * @returns {Promise<import('./read-cost.js').ReadCost[]>}
 * @example (await loopbackReadCosts(ds, ds.dir, work, 3))[0].total // e.g. 0.60 (curl 0.19 + nginx 0.41)
 */
export async function loopbackReadCosts(dataset, root, workDir, runs) {
  const web = await startNginx(LOOPBACK, { root, workDir, port: await freePort() });
  const gib = dataset.bytes / 2 ** 30;
  try {
    const costs = [];
    for (let i = 0; i < runs; i++) {
      const pids = web.pids();
      const before = pids.map(cpuTimes);
      const read = await curlRead(LOOPBACK, web.url(dataset.name), {
        expectBytes: dataset.bytes,
        cpu: true,
      });
      const after = pids.map(cpuTimes);
      const server = { user: 0, system: 0 };
      after.forEach((a, j) => {
        server.user += (a.user - (before[j]?.user ?? 0)) / gib;
        server.system += (a.system - (before[j]?.system ?? 0)) / gib;
      });
      const cpu = read.cpu ?? { user: 0, system: 0 };
      const client = { user: cpu.user / gib, system: cpu.system / gib };
      const total = client.user + client.system + server.user + server.system;
      costs.push({ mbps: read.mbps, client, donors: [server], total });
    }
    return costs;
  } finally {
    await web.stop();
  }
}

/** @returns {Promise<number>} a TCP port free on 127.0.0.1 right now */
function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}
