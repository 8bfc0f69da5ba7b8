// Degraded reads (issue 15 item 5): a dataset striped over W=8 100 Mbit/s donors read into the
// 1 Gbit/s client while one donor is frozen (SIGSTOP) and another killed (SIGKILL) mid-read,
// next to the live donors' share of the link limit: min(client goodput, Σ goodput of the donors
// left). Two readers, as the issue asks, each on its own testbed (a killed donor stays dead):
// `freeloader get` (output checked byte for byte against the dataset's SHA-256), and `dd bs=1M`
// of the whole file through `freeloader mount` on the client host to /dev/null (dd must read
// every byte; the mount's bytes are checked by mount-lan's md5sum). The undisturbed read by the
// same reader of the same dataset is a row too. BENCH_DEGRADED_READERS=get or =mount runs one.
//
// Every morsel has two copies (n=2, the default), so the frozen and the killed donors' morsels
// come from their second copies on the live donors, never from the WAN source. The machine's
// CPU can bound a read before the links do (client and eight donors on two cores): each read's
// CPU seconds per GiB (client from `get --stats`, donors from /proc) give the CPU-bound ceiling
// next to the link limit, and degraded/undisturbed in the same run, so a shortfall says whether
// it is CPU or protocol.
import { mkdir } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { parseGetSummary } from '../lib/freeloader.js';
import { fileDigest } from '../lib/dataset.js';
import { importRoundRobin, startFreeLoaderLan } from '../lib/freeloader-lan.js';
import { measureGoodput } from '../lib/goodput.js';
import { startMount, timedShell } from '../lib/mount.js';
import { clientCpuSeconds, cpuCeilingMBps, cpuSeconds } from '../lib/proc-stat.js';
import { startNginx } from '../lib/nginx.js';
import { DEFAULT_LINKS, createTestbed, exec } from '../lib/testbed.js';

/** The issue's target: a degraded `get` at 0.90 of the live donors' share of the link limit. */
const TARGET_RATIO = 0.9;
/** Stripe width (the W=8). */
const WIDTH = 8;
/** Donors frozen and killed mid-read, by index into the testbed's donors. */
const FROZEN = 0;
const KILLED = 1;
/** When the donors fail, as a fraction of the undisturbed read's duration: well inside it. */
const FAIL_AT = 0.2;

/** The readers measured: `get` and `dd` through the mount (issue 15's benchmark names both). */
const READERS = ['get', 'mount'];

export default {
  name: 'degraded-read',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    const bytes = (ctx.quick ? 256 : 1024) * 2 ** 20;
    const readers = process.env.BENCH_DEGRADED_READERS?.split(',') ?? READERS;
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    /** @type {unknown} */
    let netem;
    for (const reader of readers) {
      if (!READERS.includes(reader)) throw new Error(`unknown reader ${reader}`);
      const r = await readerCase(ctx, /** @type {'get' | 'mount'} */ (reader), bytes);
      rows.push(...r.rows);
      netem = r.netem;
    }
    return ctx.report('degraded-read', { width: WIDTH, bytes, readers }, rows, { netem });
  },
};

/**
 * One reader's undisturbed and degraded reads on a testbed of its own.
 *
 * @param {import('../lib/context.js').BenchContext} ctx
 * @param {'get' | 'mount'} reader
 * @param {number} bytes
 */
async function readerCase(ctx, reader, bytes) {
  const work = ctx.workDir(`degraded-read-${reader}`);
  const tb = await createTestbed({ donors: WIDTH, log: ctx.log });
  /** @type {import('../lib/report.js').Row[]} */
  const rows = [];
  /** @type {import('node:child_process').ChildProcess | undefined} */
  let frozen;
  try {
    const probe = (
      /** @type {import('../lib/testbed.js').LanHost} */ from,
      /** @type {number} */ mbit,
    ) => measureGoodput(from, tb.client, Math.round((mbit / 8) * 1e6 * (ctx.quick ? 1 : 2)), work);
    const clientGp = (await probe(tb.manager, 1000)).mbps;
    /** @type {number[]} */
    const donorGp = [];
    for (const d of tb.donors) donorGp.push((await probe(d, 100)).mbps);
    const sumOf = (/** @type {number[]} */ gp) => gp.reduce((a, b) => a + b, 0);

    // Imports are setup, not what is measured: give the source a fast link while importing.
    await tb.shape(tb.source, { rateMbit: 1000 });
    const fl = await startFreeLoaderLan(tb, {
      workDir: work,
      quota: ctx.quick ? '1GiB' : '4GiB',
    });
    const ds = await ctx.dataset(bytes);
    const source = await startNginx(tb.source, { root: ds.dir, workDir: join(work, 'nginx') });
    const name = `bench/degraded-w${WIDTH}`;
    await importRoundRobin(fl, source.url(ds.name), name, WIDTH);
    await exec(tb.client, 'sync', []);
    // The read: the source is the WAN server again, as a real fallback would find it.
    await tb.shape(tb.source, DEFAULT_LINKS.source);
    const out = join(work, 'out');
    const label = `${bytes / 2 ** 20} MiB`;

    const pids = fl.agents.map((a) => a.child.pid);
    /**
     * @param {string} what
     * @param {() => void} [onStart] called as the data starts to move (after mounting)
     */
    const readGet = async (what, onStart) => {
      // A donor killed mid-read takes its CPU seconds with it: its share is not counted.
      const before = pids.map((p) => cpuSeconds(p));
      onStart?.();
      const got = await fl.cli(['get', name, '-o', out, '--stats'], 900_000);
      let donorCpu = 0;
      pids.forEach((p, i) => (donorCpu += Math.max(0, cpuSeconds(p) - (before[i] ?? 0))));
      ctx.log(`${what} ${label}:\n${got.stderr.trim()}`);
      const summary = parseGetSummary(got.stderr);
      const { sha256 } = await fileDigest(out);
      if (sha256 !== ds.sha256) throw new Error(`${what}: output differs from the source`);
      await exec(tb.client, 'rm', ['-f', out]);
      const perGiB = (clientCpuSeconds(got.stderr) + donorCpu) / (bytes / 2 ** 30);
      const failures = Number(/(\d+) donor failure/.exec(got.stderr)?.[1] ?? NaN);
      return { ...summary, stderr: got.stderr, perGiB, failures };
    };
    const mnt = join(work, 'mnt');
    await mkdir(mnt, { recursive: true });
    /** A fresh mount (default options, as a user mounts it) per read: nothing cached. */
    const readMount = async (
      /** @type {string} */ what,
      /** @type {(() => void) | undefined} */ onStart = undefined,
    ) => {
      const m = await startMount({ host: tb.client, home: fl.cliHome, url: fl.url, dir: mnt });
      /** @type {Awaited<ReturnType<typeof timedShell>> | undefined} */
      let r;
      try {
        onStart?.();
        const file = join(mnt, name);
        r = await timedShell(
          `dd if='${file}' of=/dev/null bs=1M 2>&1 | grep -o '^[0-9]* bytes'`,
          bytes,
        );
      } finally {
        const served = await m.stop().catch((e) => {
          if (r) throw e;
          return null;
        });
        ctx.log(`${what} ${label} through the mount: ${JSON.stringify(served)}`);
      }
      if (r.stdout.trim() !== `${bytes} bytes`)
        throw new Error(`${what}: dd read ${r.stdout.trim()}`);
      const seconds = bytes / 1e6 / r.mbps;
      return { mbps: r.mbps, seconds, stderr: '', perGiB: NaN, failures: NaN };
    };
    const read = reader === 'get' ? readGet : readMount;
    const cores = availableParallelism();
    const ceilingRow = (
      /** @type {string} */ what,
      /** @type {{ mbps: number, perGiB: number, seconds: number }} */ r,
    ) => ({
      case: `CPU-bound ceiling, ${what} (client + donors CPU per GiB, ${cores} cores)`,
      params: {
        cpuSecondsPerGiB: Number(r.perGiB.toFixed(2)),
        cores,
        // The cores the read actually got: far below `cores` means other work had the CPU.
        coresUsed: Number(((r.perGiB * bytes) / 2 ** 30 / r.seconds).toFixed(2)),
      },
      mbps: r.mbps,
      limitMbps: cpuCeilingMBps(r.perGiB, cores),
      note: 'the read vs the rate the cores could sustain at its CPU cost (nothing else running)',
    });

    const whole = await read('undisturbed');
    const what = reader === 'get' ? 'FreeLoader get' : 'dd bs=1M through the mount';
    const checked = reader === 'get' ? 'sha256 ok' : 'dd read every byte';
    rows.push({
      case: `${what} W=${WIDTH}, ${label}, all donors`,
      params: { W: WIDTH, bytes, seconds: whole.seconds },
      mbps: whole.mbps,
      limitMbps: Math.min(clientGp, sumOf(donorGp)),
      note: `${checked}; limit min(client, Σ donors); the reference for the degraded read`,
    });

    // Freeze one donor and kill another a little way into the read.
    const failAfterMs = Math.max(500, whole.seconds * FAIL_AT * 1000);
    /** @type {Promise<void> | undefined} */
    let failing;
    /** @type {number | undefined} */
    let failedAt;
    const degraded = await read('one frozen, one killed', () => {
      failing = sleep(failAfterMs).then(() => {
        failedAt = performance.now();
        frozen = fl.agents[FROZEN]?.child;
        frozen?.kill('SIGSTOP');
        fl.agents[KILLED]?.child.kill('SIGKILL');
      });
    });
    const endedAt = performance.now();
    await failing;
    // A read that ended before the failures measured nothing degraded.
    if (failedAt === undefined || failedAt > endedAt)
      throw new Error(`${what}: the read ended before the donors failed (${failAfterMs} ms in)`);
    const live = donorGp.filter((_, i) => i !== FROZEN && i !== KILLED);
    // `get` names a dropped donor by id (its warnings), the connection counts by address.
    const dropped = (degraded.stderr.match(/ left out of the read: /g) ?? []).length;
    const killedIp = tb.donors[KILLED]?.ip ?? '';
    const attempts = /^connection attempts: (.*)$/m.exec(degraded.stderr)?.[1] ?? '';
    const killedAttempts = Number(
      new RegExp(`${killedIp.replaceAll('.', '\\.')}:\\d+ (\\d+)`).exec(attempts)?.[1] ?? NaN,
    );
    const liveLimit = Math.min(clientGp, sumOf(live));
    rows.push({
      case: `${what} W=${WIDTH}, ${label}, one donor frozen and one killed mid-read`,
      params: {
        W: WIDTH,
        bytes,
        seconds: degraded.seconds,
        failAfterMs: Math.round(failAfterMs),
        // From `get --stats` (the mount prints none of it): left out, and the connections the
        // read attempted to the killed donor, before the kill included (issue 15: a refused
        // donor is left out at once, so at most one after the kill).
        ...(reader === 'get'
          ? {
              donorsDropped: dropped,
              killedConnectionAttempts: killedAttempts,
              donorFailures: degraded.failures,
            }
          : {}),
      },
      mbps: degraded.mbps,
      limitMbps: liveLimit,
      targetRatio: TARGET_RATIO,
      note:
        `${checked}; limit min(client, Σ live donors); frozen donor and killed donor` +
        (reader === 'get' ? `: ${dropped} left out` : '') +
        '; their morsels from the second copies',
    });
    rows.push({
      case: `${what}: degraded / undisturbed, same run`,
      params: {
        linkShare: Number((liveLimit / Math.min(clientGp, sumOf(donorGp))).toFixed(3)),
      },
      mbps: degraded.mbps,
      limitMbps: whole.mbps,
      note: 'info: the live donors are linkShare of the link limit; on a CPU-bound box both reads share the same ceiling',
    });
    // The mount's CPU is not in a stats line: the ceiling rows are the get's.
    if (reader === 'get')
      rows.push(ceilingRow('undisturbed', whole), ceilingRow('degraded', degraded));
    frozen?.kill('SIGCONT');
    await source.stop();
  } finally {
    frozen?.kill('SIGCONT');
    tb.teardown();
  }
  return { rows, netem: tb.netem };
}
