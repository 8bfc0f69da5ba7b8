// Reading through `freeloader mount`: start a mount (in the root namespace, or with its network
// in a testbed host's namespace), time `dd` and `md5sum` through it, and the `get` it is compared
// with. Shared by mount-loopback and mount-lan.
import { spawn } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { onCleanup } from './cleanup-hooks.js';
import { FREELOADER_CLI, freeloaderEnv, parseGetSummary } from './freeloader.js';
import { detachMount } from './fuse-mounts.js';
import { busySeconds } from './proc-stat.js';
import { run } from './sh.js';
import { repeat } from './stats.js';

const SERVED = /served ([\d.]+) MB in (\d+) reads: (\d+) from memory, (\d+) waited ([\d.]+) s/;

/**
 * What the mount said about its reads when it stopped (its `served …` line).
 *
 * @typedef {object} Served
 * @property {number} reads kernel read requests
 * @property {number} fromMemory answered at once from the mount's memory
 * @property {number} waited had to wait for morsels
 * @property {number} waitedSeconds total wait
 */

/**
 * `freeloader mount <dir>` as the CLI's user in `home`; resolves once it says it is mounted. With
 * a `host` in a namespace, only its network joins that namespace (`nsenter --net`): the mount
 * itself lands in this mount namespace, so `dd` here reads through it while morsels cross the
 * host's shaped link. A cleanup hook detaches the mount point if the run dies first.
 *
 * @param {{ host: import('./processes.js').Host, home: string, url: string, dir: string, args?: string[] }} opts
 * @returns {Promise<{ stop: () => Promise<Served | null> }>}
 * @example
 *   const m = await startMount({ host: tb.client, home: fl.cliHome, url: fl.url, dir });
 *   try { … } finally { await m.stop(); }
 */
export async function startMount(opts) {
  const argv = [FREELOADER_CLI, 'mount', opts.dir, '--manager', opts.url, ...(opts.args ?? [])];
  const [cmd, args] = opts.host.ns
    ? ['nsenter', [`--net=/run/netns/${opts.host.ns}`, 'node', ...argv]]
    : ['node', argv];
  const child = spawn(cmd, args, {
    env: freeloaderEnv(opts.home),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Whatever ends the run (an error, Ctrl-C, exit), the mount point must not stay "not
  // connected": kill the mount and detach it (a no-op when nothing is mounted there).
  const forget = onCleanup(() => {
    child.kill('SIGKILL');
    detachMount(opts.dir);
  });
  let err = '';
  child.stderr?.on('data', (b) => (err += b));
  /** @type {Promise<number | null>} */
  const exited = new Promise((resolve) => child.once('exit', resolve));
  try {
    await new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`not mounted in 30 s:\n${err}`)), 30_000);
      child.stderr?.on('data', () => {
        if (/^mounted /m.test(err)) {
          clearTimeout(timer);
          resolve(undefined);
        }
      });
      exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`mount exited (${code}):\n${err}`));
      });
    });
  } catch (e) {
    // It may have mounted without saying so in time, or died after mounting: a lazy detach
    // works whether its server is still dying or gone (and is a no-op when nothing is there).
    child.kill('SIGKILL');
    detachMount(opts.dir);
    forget();
    throw e;
  }
  return {
    stop: async () => {
      child.kill('SIGTERM');
      const code = await exited;
      forget();
      if (code !== 0) {
        // A mount that died leaves its mount point "not connected": detach it.
        detachMount(opts.dir);
        throw new Error(`mount exited ${code}:\n${err}`);
      }
      const m = SERVED.exec(err);
      return m
        ? {
            reads: Number(m[2]),
            fromMemory: Number(m[3]),
            waited: Number(m[4]),
            waitedSeconds: Number(m[5]),
          }
        : null;
    },
  };
}

/**
 * Time a shell command (wall clock, as a user sees it); MB/s of `bytes` and its stdout.
 *
 * @param {string} command
 * @param {number} bytes
 * @returns {Promise<{ mbps: number, stdout: string }>}
 */
export async function timedShell(command, bytes) {
  const t0 = performance.now();
  const { stdout } = await run('bash', ['-c', command], { timeoutMs: 900_000 });
  const seconds = (performance.now() - t0) / 1000;
  return { mbps: bytes / 1e6 / seconds, stdout };
}

/**
 * @typedef {object} MountReads
 * @property {{ median: number, samples: number[] }} dd `dd bs=1M` of a file not read before, on a
 *   mount with default options (as a user mounts it)
 * @property {number[]} ddLargeCache the same cold dd on a mount whose cache (`cacheMb`) holds the file
 *   (its memory is touched for the first time during the read)
 * @property {number} cacheMb that mount's --cache-mb
 * @property {number[]} fromMemory a second dd on that mount after dropping the file's pages
 *   from the page cache: the mount's memory holds it, so this is the kernel ⇄ FUSE ⇄ node path
 * @property {{ median: number, samples: number[] }} md5 `md5sum`, on its own fresh mount
 * @property {number[]} md5Busy CPU seconds the whole machine spent busy during each md5sum
 * @property {Served[]} served the mount's own counts, one per mount
 */

/**
 * `reps` samples each of `dd if=file of=/dev/null bs=1M` and `md5sum file`, every sample on a
 * fresh mount with default options (so neither the page cache nor the mount's cache holds the
 * file), then `memoryReps` mounts with a cache large enough for the whole file: a cold dd, the
 * page cache dropped, and a dd from the mount's memory. dd must read `bytes`; md5sum must print
 * `md5` (the source's), else it throws.
 *
 * @param {{ host: import('./processes.js').Host, home: string, url: string, dir: string,
 *   file: string, bytes: number, md5: string, reps: number, memoryReps?: number }} opts
 * @returns {Promise<MountReads>}
 */
export async function readThroughMount(opts) {
  const { file, bytes } = opts;
  const dd = `dd if='${file}' of=/dev/null bs=1M 2>&1 | grep -o '^[0-9]* bytes'`;
  const timedDd = async () => {
    const r = await timedShell(dd, bytes);
    if (r.stdout.trim() !== `${bytes} bytes`) throw new Error(`dd read ${r.stdout.trim()}`);
    return r.mbps;
  };
  // Room for the whole file, so the second dd is served from the mount's memory.
  const cacheMb = Math.ceil((bytes * 1.25) / 2 ** 20);
  /** @type {number[]} */
  const ddLargeCache = [];
  /** @type {number[]} */
  const fromMemory = [];
  /** @type {Served[]} */
  const served = [];
  const mounted = async (/** @type {string[]} */ args, /** @type {() => Promise<number>} */ fn) => {
    const m = await startMount({ ...opts, args });
    let ok = false;
    try {
      const r = await fn();
      ok = true;
      return r;
    } finally {
      const s = await m.stop().catch((e) => {
        if (ok) throw e;
        return null;
      });
      if (s) served.push(s);
    }
  };
  const ddRuns = await repeat(opts.reps, () => mounted([], timedDd));
  await repeat(opts.memoryReps ?? opts.reps, () =>
    mounted(['--cache-mb', String(cacheMb)], async () => {
      ddLargeCache.push(await timedDd());
      await run('dd', [`if=${file}`, 'iflag=nocache', 'count=0', 'status=none']);
      fromMemory.push(await timedDd());
      return 0;
    }),
  );
  /** @type {number[]} */
  const md5Busy = [];
  const md5 = await repeat(opts.reps, () =>
    mounted([], async () => {
      const busy = busySeconds();
      const r = await timedShell(`md5sum '${file}'`, bytes);
      md5Busy.push(busySeconds() - busy);
      const got = r.stdout.split(' ')[0];
      if (got !== opts.md5) throw new Error(`md5 through the mount ${got} ≠ source ${opts.md5}`);
      return r.mbps;
    }),
  );
  return { dd: ddRuns, ddLargeCache, cacheMb, fromMemory, md5, md5Busy, served };
}

/**
 * `freeloader get <name> -o /dev/null`, `reps` times: its own MB/s summary line.
 *
 * @param {(args: string[], timeoutMs?: number) => Promise<import('./sh.js').RunResult>} cli
 * @param {string} name
 * @param {number} reps
 * @returns {Promise<{ median: number, samples: number[] }>}
 */
export function getToNull(cli, name, reps) {
  return repeat(reps, async () => {
    const got = await cli(['get', name, '-o', '/dev/null', '--stats'], 900_000);
    return parseGetSummary(got.stderr).mbps;
  });
}

/**
 * Summary of the mounts' counts for a results note: how many kernel reads had to wait.
 *
 * @param {Served[]} served
 * @returns {string}
 * @example servedNote([{ reads: 2049, fromMemory: 2040, waited: 9, waitedSeconds: 0.2 }])
 *   // '9 of 2049 kernel reads waited (0.20 s)'
 */
export function servedNote(served) {
  const reads = served.reduce((s, x) => s + x.reads, 0);
  const waited = served.reduce((s, x) => s + x.waited, 0);
  const secs = served.reduce((s, x) => s + x.waitedSeconds, 0);
  return `${waited} of ${reads} kernel reads waited (${secs.toFixed(2)} s)`;
}
