import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileDigest } from './dataset.js';
import { startNginx } from './nginx.js';
import { exec, LOOPBACK } from './processes.js';

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
 * @param {{ expectBytes?: number }} [opts]
 * @returns {Promise<Read>}
 * @example
 *   const r = await curlRead(tb.client, source.url(ds.name), { expectBytes: ds.bytes });
 */
export async function curlRead(host, url, opts = {}) {
  const fmt = '%{http_code} %{size_download} %{time_total} %{speed_download}';
  const { stdout } = await exec(host, 'curl', ['-sS', '--fail', '-o', '/dev/null', '-w', fmt, url]);
  const [code, size = NaN, time = NaN, speed = NaN] = stdout.trim().split(' ').map(Number);
  if (code !== 200) throw new Error(`curl ${url}: HTTP ${code}`);
  if (opts.expectBytes !== undefined && size !== opts.expectBytes) {
    throw new Error(`curl ${url}: got ${size} bytes, expected ${opts.expectBytes}`);
  }
  return { bytes: size, seconds: time, mbps: speed / 1e6 };
}

/** GNU time (Debian package `time`): aria2c's own CPU seconds, read when it exits. */
const GNU_TIME = '/usr/bin/time';
/** What `/usr/bin/time -f` prints on its last stderr line: user and system CPU seconds. */
const TIME_FORMAT = 'client-cpu %U %S';
const TIME_LINE = /client-cpu ([\d.]+) ([\d.]+)\s*$/;

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
  if (!existsSync(GNU_TIME))
    throw new Error(`aria2c's CPU is read with GNU time: install ${GNU_TIME}`);
  const out = join(outDir, 'out');
  const t0 = performance.now();
  const { stderr } = await exec(host, GNU_TIME, ['-f', TIME_FORMAT, 'aria2c', ...args]);
  const seconds = (performance.now() - t0) / 1000;
  const times = TIME_LINE.exec(stderr);
  if (!times) throw new Error(`aria2c: no CPU times from /usr/bin/time: ${stderr}`);
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
  const cpu = { user: Number(times[1]), system: Number(times[2]) };
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
