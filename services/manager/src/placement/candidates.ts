import { storageDonorSpace } from '../repositories/donor-space.js';
import type { PlacementDeps } from './placement-deps.js';

export interface Candidate {
  id: string;
  url: string;
  /** quota − used − active reservations, in bytes. */
  freeBytes: number;
  /** The donor's serving governor state from its last heartbeat (absent: not reported). */
  throttle?: string;
}

/** Governor states that slow a donor's serving, in order of preference (best first). */
const THROTTLE_RANK: Record<string, number> = { contended: 1, active: 2, paused: 3 };

/** 0 for an unthrottled donor (idle, unknown, not reported), higher for slower ones. */
export function throttleRank(throttle: string | undefined): number {
  return THROTTLE_RANK[throttle ?? ''] ?? 0;
}

/**
 * Donors an import may use: enrolled, not revoked, not bandwidth-only, live right now (stale and
 * dead donors are never chosen), not reporting a full disk, with their free space as the manager's ledger sees it.
 */
export async function placementCandidates(deps: PlacementDeps): Promise<Candidate[]> {
  const rows = await storageDonorSpace(deps.pg);
  return (
    rows
      // A donor whose disk filled up (ENOSPC) gets nothing new until it reports room again.
      .filter(
        (r) =>
          deps.softState.stateOf(r.id) === 'live' && !deps.softState.heartbeatOf(r.id)?.diskFull,
      )
      .map((r) => {
        const hb = deps.softState.heartbeatOf(r.id);
        return {
          id: r.id,
          url: hb?.url ?? r.url,
          freeBytes: Math.max(0, Number(r.free)),
          ...(hb?.throttle ? { throttle: hb.throttle } : {}),
        };
      })
      .sort((a, b) => throttleRank(a.throttle) - throttleRank(b.throttle))
  );
}

/**
 * Candidates as they would be once each donor got `extra` bytes back (a dry run of making room).
 *
 * @example withExtraFree([{ id: 'a', url: 'u', freeBytes: 1 }], new Map([['a', 2]])) // → a: 3 free
 */
export function withExtraFree(
  candidates: Candidate[],
  extra: ReadonlyMap<string, number> | undefined,
): Candidate[] {
  if (!extra || extra.size === 0) return candidates;
  return candidates.map((c) => ({ ...c, freeBytes: c.freeBytes + (extra.get(c.id) ?? 0) }));
}
