#!/usr/bin/env node
// Removes what a crashed benchmark run left behind: `fl-*` namespaces (and the processes in
// them), FUSE mounts under its scratch directory and the directory itself, for runs whose owner
// is gone. `--force` also removes those of runs still alive.
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { detachMount, listBenchFuseMounts } from './lib/fuse-mounts.js';
import { destroyNamespaces, listNamespaces, NS_PREFIX } from './lib/netns.js';

/**
 * Run id of a testbed namespace name (`fl-3fa2-d1` → `3fa2`), or null for foreign names.
 *
 * @param {string} ns
 * @returns {string | null}
 */
export function runIdOf(ns) {
  const m = new RegExp(`^${NS_PREFIX}([0-9a-f]{4})-[a-z0-9]+$`).exec(ns);
  return m?.[1] ?? null;
}

/** @param {number} pid */
function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether the process named in a marker file (JSON with `pid`) still runs.
 *
 * @param {string} markerPath
 */
function ownerAlive(markerPath) {
  try {
    const { pid } = JSON.parse(readFileSync(markerPath, 'utf8'));
    return typeof pid === 'number' && pid !== process.pid && alive(pid);
  } catch {
    return false;
  }
}

function main() {
  if (process.getuid?.() !== 0) throw new Error('cleanup needs root');
  const force = process.argv.includes('--force');
  const ours = listNamespaces().filter((ns) => runIdOf(ns) !== null);
  /** @type {Map<string, string[]>} */
  const byRun = new Map();
  for (const ns of ours) {
    const id = /** @type {string} */ (runIdOf(ns));
    byRun.set(id, [...(byRun.get(id) ?? []), ns]);
  }
  let removed = 0;
  for (const [id, namespaces] of byRun) {
    if (!force && ownerAlive(join(tmpdir(), `fl-testbed-${id}.json`))) {
      console.error(`cleanup: run ${id} is still running; skipped (--force removes it)`);
      continue;
    }
    const failed = destroyNamespaces(namespaces);
    removed += namespaces.length - failed.length;
    if (failed.length) console.error(`cleanup: could not delete ${failed.join(', ')}`);
    rmSync(join(tmpdir(), `fl-testbed-${id}.json`), { force: true });
  }
  // FUSE mounts of dead runs (a `kill -9` during mount-lan/mount-loopback), after the namespaces
  // whose processes served some of them: detached lazily, before `rm -r` would walk into them.
  /** @type {Set<string>} scratch directories still holding a mount we could not detach */
  const stillMounted = new Set();
  let detached = 0;
  for (const { mountPoint, runDir } of listBenchFuseMounts(tmpdir())) {
    if (!force && ownerAlive(join(runDir, 'owner.json'))) continue;
    if (detachMount(mountPoint)) detached++;
    else {
      stillMounted.add(runDir);
      console.error(`cleanup: could not unmount ${mountPoint}`);
    }
  }
  // Scratch directories (datasets can be 1 GiB) and markers of dead runs.
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (name.startsWith('fl-bench-') && (force || !ownerAlive(join(path, 'owner.json')))) {
      if (stillMounted.has(path)) continue;
      try {
        rmSync(path, { recursive: true, force: true });
      } catch (e) {
        console.error(`cleanup: could not remove ${path}: ${e instanceof Error ? e.message : e}`);
      }
    } else if (/^fl-testbed-[0-9a-f]{4}\.json$/.test(name) && (force || !ownerAlive(path))) {
      rmSync(path, { force: true });
    }
  }
  console.error(`cleanup: removed ${removed} namespace(s), unmounted ${detached} FUSE mount(s)`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
