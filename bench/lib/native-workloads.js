// The seed's §5.4 native workloads, run on the donor's machine and timed: what an owner does
// while FreeLoader serves (write, browse, compress, copy, delete), a CPU-bound job and a large
// uncached read. Times exclude the 1–3 s pauses between steps (they are the owner thinking).
import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, open, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from './sh.js';

/** @param {number} ms */
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Seconds `fn` takes. @param {() => Promise<unknown>} fn */
async function timed(fn) {
  const t = performance.now();
  await fn();
  return (performance.now() - t) / 1000;
}

/** Walk a tree, stat-ing every entry (browsing). @param {string} dir @returns {Promise<number>} */
async function browse(dir) {
  let n = 0;
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    await stat(p).catch(() => undefined);
    n++;
    if (e.isDirectory()) n += await browse(p).catch(() => 0);
  }
  return n;
}

/**
 * The composite workload: write 25 MB of random files, browse, bzip2 them, copy the archive,
 * browse, delete — with fixed 1–3 s pauses between steps (the same every run). Returns busy
 * seconds.
 *
 * @param {string} dir scratch directory
 * @param {string} browseRoot a tree to browse (e.g. /usr/share/doc)
 */
export async function compositeWorkload(dir, browseRoot) {
  const files = join(dir, 'files');
  await mkdir(files, { recursive: true });
  let busy = 0;
  busy += await timed(async () => {
    for (let i = 0; i < 25; i++) {
      const fh = await open(join(files, `f${i}.bin`), 'w');
      await fh.write(randomBytes(1e6));
      await fh.sync();
      await fh.close();
    }
  });
  await sleep(1000);
  busy += await timed(() => browse(browseRoot));
  await sleep(2000);
  busy += await timed(() => run('tar', ['-cjf', join(dir, 'files.tar.bz2'), '-C', dir, 'files']));
  await sleep(1500);
  busy += await timed(async () => {
    await copyFile(join(dir, 'files.tar.bz2'), join(dir, 'copy.tar.bz2'));
    const fh = await open(join(dir, 'copy.tar.bz2'), 'r+');
    await fh.sync();
    await fh.close();
  });
  await sleep(3000);
  busy += await timed(() => browse(browseRoot));
  await sleep(1000);
  busy += await timed(() => rm(dir, { recursive: true, force: true }));
  return busy;
}

/** A CPU-bound job: bzip2 -9 of `bytes` of random data. @param {string} dir @param {number} bytes */
export async function cpuWorkload(dir, bytes) {
  await mkdir(dir, { recursive: true });
  const input = join(dir, 'cpu.bin');
  const fh = await open(input, 'w');
  for (let done = 0; done < bytes; done += 4e6)
    await fh.write(randomBytes(Math.min(4e6, bytes - done)));
  await fh.close();
  const seconds = await timed(() => run('sh', ['-c', `bzip2 -9 -c '${input}' > /dev/null`]));
  await rm(dir, { recursive: true, force: true });
  return seconds;
}

/**
 * A large uncached read: `dd iflag=direct` bypasses the page cache without dropping everyone
 * else's. @param {string} file an existing large file
 */
export function uncachedReadWorkload(file) {
  return timed(() => run('dd', [`if=${file}`, 'of=/dev/null', 'bs=4M', 'iflag=direct']));
}
