/**
 * Synchronous cleanups that must run however the process ends: normal exit, an uncaught error,
 * SIGINT (Ctrl-C) or SIGTERM. Each hook runs once; hooks run newest first.
 */

/** @type {Map<number, () => void>} */
const hooks = new Map();
let nextId = 1;
let installed = false;

/** Run every pending hook now (newest first), forgetting them; errors are printed, not thrown. */
export function runCleanupHooks() {
  const pending = [...hooks.entries()].reverse();
  hooks.clear();
  for (const [, fn] of pending) {
    try {
      fn();
    } catch (e) {
      console.error('cleanup:', e instanceof Error ? e.message : e);
    }
  }
}

function install() {
  if (installed) return;
  installed = true;
  process.on('exit', runCleanupHooks);
  for (const [signal, code] of /** @type {const} */ ([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ])) {
    process.on(signal, () => {
      console.error(`\n${signal}: tearing down`);
      runCleanupHooks();
      process.exit(code);
    });
  }
}

/**
 * Register a synchronous cleanup; returns a function that unregisters it (call it after a
 * successful explicit teardown).
 *
 * @param {() => void} fn
 * @returns {() => void}
 * @example
 *   const forget = onCleanup(() => destroyNamespaces(names));
 *   try { ... } finally { destroyNamespaces(names); forget(); }
 */
export function onCleanup(fn) {
  install();
  const id = nextId++;
  hooks.set(id, fn);
  return () => {
    hooks.delete(id);
  };
}
