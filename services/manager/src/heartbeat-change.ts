import type { Heartbeat } from '@freeloader/protocol';

/** Heartbeat fields that change all the time and that no manager reads. */
const IGNORED: ReadonlySet<string> = new Set<keyof Heartbeat>(['cpuLoad']);

/**
 * Whether a heartbeat says anything new to the other managers and the agents table: any field
 * but `cpuLoad` (real agents send it changed in every heartbeat; no manager reads it). An idle
 * donor's heartbeats are otherwise identical, so its shared row need not be rewritten on each
 * one (see SoftState's rewrite window). Fields are compared generically (arrays and flat objects
 * by their elements), so one added to the protocol counts without a change here.
 *
 * @example heartbeatChanged({ ...hb, cpuLoad: 0.1 }, { ...hb, cpuLoad: 0.9 }) // false
 */
export function heartbeatChanged(before: Heartbeat | undefined, after: Heartbeat): boolean {
  if (!before) return true;
  return !sameFlat(before, after, IGNORED, 2);
}

/** Same keys with equal values; arrays and objects compared element by element `depth` deep. */
function sameFlat(a: object, b: object, ignored: ReadonlySet<string>, depth: number): boolean {
  const x = a as Record<string, unknown>;
  const y = b as Record<string, unknown>;
  let n = 0;
  for (const k in x) {
    if (ignored.has(k) || x[k] === undefined) continue;
    n++;
    if (!sameValue(x[k], y[k], depth)) return false;
  }
  for (const k in y) if (!ignored.has(k) && y[k] !== undefined) n--;
  return n === 0;
}

function sameValue(a: unknown, b: unknown, depth: number): boolean {
  if (a === b) return true;
  if (depth === 0 || typeof a !== 'object' || typeof b !== 'object' || !a || !b) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  return sameFlat(a, b, NONE, depth - 1);
}

const NONE: ReadonlySet<string> = new Set();
