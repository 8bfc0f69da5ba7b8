import { throttleRank, type Candidate } from './candidates.js';

/**
 * Donor sets to try for a placement, best first: the unthrottled donors when they alone give
 * the full stripe width; then everyone but paused donors; then everyone. A donor whose owner is
 * at the machine, or whose machine is busy, serves slowly — so new data goes elsewhere when
 * that costs neither width nor space.
 *
 * @example candidateSets([{id:'a'},{id:'b',throttle:'paused'}], 8) // → [[a], [a,b]]
 */
export function candidateSets(candidates: readonly Candidate[], width: number): Candidate[][] {
  const unpaused = candidates.filter((c) => c.throttle !== 'paused');
  const idle = candidates.filter((c) => throttleRank(c.throttle) === 0);
  const sets: Candidate[][] = [];
  if (idle.length > 0 && idle.length >= Math.min(width, unpaused.length)) sets.push(idle);
  if (unpaused.length > 0 && unpaused.length !== idle.length) sets.push(unpaused);
  sets.push([...candidates]);
  return sets.filter((set, i) => i === sets.length - 1 || set.length < candidates.length);
}
