#!/usr/bin/env node
// Removes what a crashed benchmark run left behind: `fl-*` namespaces (and the processes in
// them) whose owning run is gone. `--force` also removes those of runs still alive.
import { readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
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
  // Scratch directories (datasets can be 1 GiB) and markers of dead runs.
  for (const name of readdirSync(tmpdir())) {
    const path = join(tmpdir(), name);
    if (name.startsWith('fl-bench-') && (force || !ownerAlive(join(path, 'owner.json')))) {
      rmSync(path, { recursive: true, force: true });
    } else if (/^fl-testbed-[0-9a-f]{4}\.json$/.test(name) && (force || !ownerAlive(path))) {
      rmSync(path, { force: true });
    }
  }
  console.error(`cleanup: removed ${removed} namespace(s)`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) main();
