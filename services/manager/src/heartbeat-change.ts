import { isDeepStrictEqual } from 'node:util';
import type { Heartbeat } from '@freeloader/protocol';

/**
 * Whether a heartbeat says anything new to the other managers and the agents table: any field
 * but `cpuLoad` (real agents send it changed in every heartbeat; no manager reads it). An idle
 * donor's heartbeats are otherwise identical, so its shared row need not be rewritten on each
 * one (see SoftState's rewrite window). The rest is compared whole, so a field added to the
 * protocol counts without a change here.
 *
 * @example heartbeatChanged({ ...hb, cpuLoad: 0.1 }, { ...hb, cpuLoad: 0.9 }) // false
 */
export function heartbeatChanged(before: Heartbeat | undefined, after: Heartbeat): boolean {
  if (!before) return true;
  const { cpuLoad: _before, ...was } = before;
  const { cpuLoad: _after, ...now } = after;
  return !isDeepStrictEqual(was, now);
}
