// Issue 16 item 5, "costs linear in what matters": a 1 TiB import placed on 1,000 donors end to
// end (probe, plan, one reservation transaction, placement and one job per donor carrying only
// its share), and the first byte of that dataset's map. Donors are enrolled agents that never
// run their jobs (no data moves); the source is a loopback server that answers a 1 TiB probe.
// PostgreSQL: a scratch database on BENCH_DATABASE_URL (default the shared 127.0.0.1:5432 one).
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { startManager } from '@freeloader/manager';
import { createScratchDatabase } from '@freeloader/manager/testing';

const GiB = 2 ** 30;
const TiB = 2 ** 40;
const MORSEL = 2 ** 20;
/** Targets from the issue (milliseconds). */
const PLACEMENT_TARGET_MS = 1000;
const FIRST_BYTE_TARGET_MS = 100;
/** First-page map fetches per case; their median is compared with the target. */
const FIRST_PAGE_SAMPLES = 7;
/** Enrolments in flight while the donors are set up (not measured). */
const ENROLL_IN_FLIGHT = 16;
/** Hash rows (4096 digests each) written per INSERT while the map is set up. */
const HASH_ROWS_PER_INSERT = 16;

export default {
  name: 'placement-scale',
  /** @param {import('../lib/context.js').BenchContext} ctx */
  async run(ctx) {
    // BENCH_DONORS=1000 and BENCH_SIZE_GIB=1024 narrow a run; quick runs only the largest case.
    const donors = Number(process.env.BENCH_DONORS ?? 1000);
    const sizes = process.env.BENCH_SIZE_GIB
      ? [Number(process.env.BENCH_SIZE_GIB) * GiB]
      : ctx.quick
        ? [TiB]
        : [TiB / 4, TiB];
    const adminUrl = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
    const db = await createScratchDatabase(adminUrl);
    const home = mkdtempSync(join(tmpdir(), 'fl-bench-placement-'));
    const source = await startFakeSource(Math.max(...sizes));
    /** @type {import('@freeloader/manager').RunningManager | undefined} */
    let manager;
    /** @type {import('../lib/report.js').Row[]} */
    const rows = [];
    try {
      manager = await startManager({
        home,
        databaseUrl: db.url,
        host: '127.0.0.1',
        port: 0,
        logLevel: 'silent',
        sourceAllow: ['127.0.0.0/8'],
        // Nobody heartbeats: donors stay live from their enrolment for the whole run.
        staleAfterMs: 3_600_000,
        deadAfterMs: 7_200_000,
      });
      const api = apiOf(manager.url, await login(manager));
      const setupStarted = performance.now();
      // 1 GiB free each, plus 10 % so a whole 1 TiB fits on 1,000 of them (1,000 GiB < 1 TiB).
      const quota = Math.ceil((1.1 * Math.max(...sizes)) / donors / MORSEL) * MORSEL;
      await enroll(api, donors, quota);
      ctx.log(`enrolled ${donors} donors of ${(quota / GiB).toFixed(2)} GiB in ${s(setupStarted)}`);

      // Warm up: the first import and map compile their routes' response serialisers (~1 s on
      // this machine); a running manager has long done that, so it is not what is measured.
      const warm = await api('POST', '/datasets', { uri: `${source.url}/${GiB}`, replicas: 1 });
      if (warm.status !== 201) throw new Error(`warm-up import: ${await warm.text()}`);
      const warmId = /** @type {any} */ (await warm.json()).dataset.id;
      await markReady(db.url, warmId, GiB / MORSEL);
      await firstByte(api, `/datasets/${warmId}/map?first=0&count=4096`);
      await firstByte(api, `/datasets/${warmId}/map?first=0&count=4096`, 'bytes');
      await releaseAll(db.url);

      for (const size of sizes) {
        const name = `scale/${size / GiB}GiB`;
        const t0 = performance.now();
        const res = await profiled(`import-${size / GiB}GiB`, () =>
          api('POST', '/datasets', { uri: `${source.url}/${size}`, name, replicas: 1 }),
        );
        const placementMs = performance.now() - t0;
        if (res.status !== 201) throw new Error(`import failed: ${res.status} ${await res.text()}`);
        const body = /** @type {any} */ (await res.json());
        const jobs = await jobStats(db.url, body.dataset.id);
        ctx.log(
          `${name}: placed in ${placementMs.toFixed(0)} ms on ${body.plan.donors} donors; ` +
            `${jobs.count} jobs, payloads ${kb(jobs.total)} total, ${kb(jobs.max)} largest`,
        );
        rows.push({
          case: `placement ${size / GiB} GiB on ${donors} donors`,
          params: { sizeBytes: size, donors, usedDonors: body.plan.donors, ...jobs },
          mbps: Number(placementMs.toFixed(1)),
          limitMbps: PLACEMENT_TARGET_MS,
          targetRatio: 1,
          lowerIsBetter: true,
          note: `ms (target < ${PLACEMENT_TARGET_MS}); jobs ${kb(jobs.total)} total, ${kb(jobs.max)} max`,
        });

        const morsels = Math.ceil(size / MORSEL);
        await markReady(db.url, body.dataset.id, morsels);
        const id = body.dataset.id;
        const page = await profiled(`map-${size / GiB}GiB`, () =>
          firstByte(api, `/datasets/${id}/map?first=0&count=4096`),
        );
        // One sample is mostly the shared machine's scheduling at load 15-25 (the same page
        // took 46-250 ms in one run): the median of FIRST_PAGE_SAMPLES is what is compared
        // with the target, the first (cold) sample and the slowest are reported beside it.
        // The CPU this process (manager and client) spends per page, PostgreSQL's apart: what
        // the page costs here on an idle machine, whatever the load makes its wall time.
        const samples = [page.firstByteMs];
        const cpuBefore = process.cpuUsage();
        for (let k = 1; k < FIRST_PAGE_SAMPLES; k++) {
          samples.push(
            (await firstByte(api, `/datasets/${id}/map?first=0&count=4096`)).firstByteMs,
          );
        }
        const cpu = process.cpuUsage(cpuBefore);
        const cpuMsPerPage = (cpu.user + cpu.system) / 1000 / (FIRST_PAGE_SAMPLES - 1);
        const median = [...samples].sort((a, b) => a - b)[Math.floor(samples.length / 2)];
        const next = await firstByte(api, `/datasets/${id}/map?first=4096&count=4096`, 'bytes');
        const nextTags = await firstByte(
          api,
          `/datasets/${id}/map?first=4096&count=4096&of=tags`,
          'bytes',
        );
        const whole = await firstByte(api, `/datasets/${id}/map`);
        ctx.log(
          `${name} map: first page ${median.toFixed(1)} ms median of ${samples.length} ` +
            `(first ${page.firstByteMs.toFixed(1)}, slowest ${Math.max(...samples).toFixed(1)}; ` +
            `${kb(page.bytes)}; ${cpuMsPerPage.toFixed(1)} ms of this process's CPU each), ` +
            `next binary page ${next.firstByteMs.toFixed(1)} ms (${kb(next.bytes)}), ` +
            `its tags ${nextTags.firstByteMs.toFixed(1)} ms (${kb(nextTags.bytes)}), ` +
            `whole map ${whole.firstByteMs.toFixed(0)} ms to first byte, ` +
            `${whole.totalMs.toFixed(0)} ms (${kb(whole.bytes)})`,
        );
        rows.push({
          case: `map first byte, ${size / GiB} GiB (${morsels} morsels)`,
          params: {
            morsels,
            firstPage: page,
            firstPageSamplesMs: samples.map((x) => Number(x.toFixed(1))),
            cpuMsPerPage: Number(cpuMsPerPage.toFixed(1)),
            nextPage: next,
            nextTags,
            wholeMap: whole,
          },
          mbps: Number(median.toFixed(1)),
          limitMbps: FIRST_BYTE_TARGET_MS,
          targetRatio: 1,
          lowerIsBetter: true,
          note:
            `ms, median of ${samples.length} (target < ${FIRST_BYTE_TARGET_MS}); first ` +
            `${page.firstByteMs.toFixed(0)} ms, slowest ${Math.max(...samples).toFixed(0)} ms, ` +
            `${cpuMsPerPage.toFixed(0)} ms CPU each; ` +
            `whole hex map: ${whole.firstByteMs.toFixed(0)} ms to first byte, ${kb(whole.bytes)}`,
        });
        await releaseAll(db.url); // every case starts on empty donors
      }
      return await ctx.report('placement-scale', { donors, sizes, quick: ctx.quick }, rows, {
        note: 'mbps column holds milliseconds (lower is better)',
      });
    } finally {
      await manager?.close().catch(() => undefined);
      await source.close();
      await db.drop().catch(() => undefined);
      rmSync(home, { recursive: true, force: true });
    }
  },
};

/**
 * Run `fn`; with BENCH_PROFILE=dir, under the V8 profiler (the manager runs in this process),
 * writing `dir/<name>.cpuprofile` for Chrome DevTools or speedscope.
 *
 * @template T
 * @param {string} name
 * @param {() => Promise<T>} fn
 * @returns {Promise<T>}
 */
async function profiled(name, fn) {
  const dir = process.env.BENCH_PROFILE;
  if (!dir) return fn();
  const session = new Session();
  session.connect();
  await session.post('Profiler.enable');
  await session.post('Profiler.start');
  try {
    return await fn();
  } finally {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(join(dir, `${name}.cpuprofile`), JSON.stringify(profile));
    session.disconnect();
  }
}

/**
 * A source that answers HEAD and ranged GETs for `/<size>` with that many zero bytes: enough
 * for the manager's probe (no data is ever read in this benchmark).
 *
 * @param {number} maxSize
 */
async function startFakeSource(maxSize) {
  const server = createServer((req, res) => {
    const size = Math.min(maxSize, Number((req.url ?? '/0').slice(1)) || 0);
    const range = /bytes=(\d+)-(\d*)/.exec(req.headers.range ?? '');
    const headers = { 'accept-ranges': 'bytes', etag: `"scale-${size}"` };
    if (range) {
      const start = Number(range[1]);
      const end = Math.min(size - 1, range[2] ? Number(range[2]) : start + 65_535);
      res.writeHead(206, {
        ...headers,
        'content-length': end - start + 1,
        'content-range': `bytes ${start}-${end}/${size}`,
      });
      if (req.method === 'HEAD') res.end();
      else res.end(Buffer.alloc(end - start + 1));
      return;
    }
    res.writeHead(200, { ...headers, 'content-length': size });
    if (req.method === 'HEAD') res.end();
    else res.destroy(); // a whole 1 TiB body is never what the manager wants
  });
  await new Promise((r) => server.listen(0, '127.0.0.1', () => r(undefined)));
  const port = /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((r) => server.close(() => r(undefined))),
  };
}

/** @param {import('@freeloader/manager').RunningManager} manager */
async function login(manager) {
  const res = await fetch(`${manager.url}/api/v1/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ username: 'admin', password: manager.adminPassword }),
  });
  return /** @type {{ token: string }} */ (await res.json()).token;
}

/**
 * @param {string} base
 * @param {string} token
 */
function apiOf(base, token) {
  /**
   * @param {string} method
   * @param {string} path
   * @param {unknown} [body]
   * @param {string} [accept]
   */
  return (method, path, body, accept = 'application/json') =>
    fetch(`${base}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${token}`,
        accept,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
}

/**
 * Enroll `n` donors of `quota` bytes with one join token, ENROLL_IN_FLIGHT at a time.
 *
 * @param {ReturnType<typeof apiOf>} api
 * @param {number} n
 * @param {number} quota
 */
async function enroll(api, n, quota) {
  const token = /** @type {any} */ (await (await api('POST', '/tokens', { maxUses: n })).json())
    .token;
  let next = 0;
  const worker = async () => {
    while (next < n) {
      const i = next++;
      const res = await api('POST', '/agents/enroll', {
        token,
        name: `scale-${i}`,
        url: `http://127.0.0.1:${10_000 + i}`,
        quotaBytes: quota,
      });
      if (res.status !== 201) throw new Error(`enroll ${i}: ${res.status} ${await res.text()}`);
    }
  };
  await Promise.all(Array.from({ length: ENROLL_IN_FLIGHT }, worker));
}

/**
 * Count and size of the import jobs queued for a dataset (bytes of their JSON payloads).
 *
 * @param {string} url
 * @param {string} datasetId
 */
async function jobStats(url, datasetId) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const { rows } = await c.query(
      `SELECT count(*)::int AS count, coalesce(sum(length(payload::text)), 0)::bigint AS total,
              coalesce(max(length(payload::text)), 0)::int AS max
       FROM jobs WHERE dataset_id = $1 AND kind = 'import'`,
      [datasetId],
    );
    return { count: rows[0].count, total: Number(rows[0].total), max: rows[0].max };
  } finally {
    await c.end();
  }
}

/**
 * Make the placed dataset readable as if its donors had imported it: a hash for every morsel
 * and, as the import made it encrypted (the default), an AES-GCM tag for every morsel (random:
 * nobody reads the data), and state ready with every byte cached. Without the tags the map would look cheaper than a
 * real one: a 1 TiB dataset's are 16 MiB.
 *
 * @param {string} url
 * @param {string} datasetId
 * @param {number} morsels
 */
async function markReady(url, datasetId, morsels) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const chunks = Math.ceil(morsels / 4096);
    for (let first = 0; first < chunks; first += HASH_ROWS_PER_INSERT) {
      const rows = Math.min(HASH_ROWS_PER_INSERT, chunks - first);
      const batch = (width) =>
        Array.from({ length: rows }, (_, i) =>
          randomBytes(width * Math.min(4096, morsels - (first + i) * 4096)),
        );
      for (const [table, column, width] of [
        ['morsel_hashes', 'hashes', 32],
        ['morsel_tags', 'tags', 16],
      ]) {
        await c.query(
          `INSERT INTO ${table} (dataset_id, chunk, ${column})
           SELECT $1, $2 + ord - 1, h FROM unnest($3::bytea[]) WITH ORDINALITY AS t(h, ord)`,
          [datasetId, first, batch(width)],
        );
      }
    }
    // As the manager marks an import done: every byte cached (else each map read would look
    // like a read of a partly cached dataset and consider extending its prefix).
    await c.query(`UPDATE datasets SET state = 'ready', cached_bytes = size_bytes WHERE id = $1`, [
      datasetId,
    ]);
  } finally {
    await c.end();
  }
}

/**
 * Give every donor its room back (the scratch database's reservations: nobody imports here).
 *
 * @param {string} url
 */
async function releaseAll(url) {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    await c.query(`UPDATE reservations SET state = 'released' WHERE state = 'active'`);
  } finally {
    await c.end();
  }
}

/**
 * Time to the first byte of a GET's body, and to its last.
 *
 * @param {ReturnType<typeof apiOf>} api
 * @param {string} path
 * @param {'json' | 'bytes'} [as]
 */
async function firstByte(api, path, as = 'json') {
  const t0 = performance.now();
  const res = await api(
    'GET',
    path,
    undefined,
    as === 'bytes' ? 'application/octet-stream' : 'application/json',
  );
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  const reader = /** @type {ReadableStream<Uint8Array>} */ (res.body).getReader();
  let firstByteMs = 0;
  let bytes = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    if (bytes === 0) firstByteMs = performance.now() - t0;
    bytes += value.length;
  }
  return { firstByteMs, totalMs: performance.now() - t0, bytes };
}

/** @param {number} bytes */
const kb = (bytes) =>
  bytes >= 2 ** 20 ? `${(bytes / 2 ** 20).toFixed(1)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
/** @param {number} since */
const s = (since) => `${((performance.now() - since) / 1000).toFixed(1)} s`;
