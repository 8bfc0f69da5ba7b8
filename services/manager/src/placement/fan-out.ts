import { signCapability, type Extent, type ImportJobPayload } from '@freeloader/protocol';
import type { AgentsRepo } from '../repositories/agents.js';
import type { SigningKeys } from '../repositories/settings.js';
import type { PlacementDeps } from './placement-deps.js';

/** What signing a fan-out touches: the donors' rows and heartbeats, the manager's key. */
export type FanOutDeps = Pick<PlacementDeps, 'softState'> & {
  agentsRepo: Pick<AgentsRepo, 'getMany'>;
  signingKeys: Pick<SigningKeys, 'privateKey'>;
};

/** What an import job carries to fan copies out donor to donor. */
export type FanOut = NonNullable<ImportJobPayload['fanOut']>;

/**
 * Copy 0's extents of a placement, and the donors they name: who imports each morsel from the
 * source, so the donors of copies ≥ 1 can copy it from them. Empty when the placement has one
 * copy.
 *
 * @example primariesOf([{ copy: 0, …, donors: ['a'] }, { copy: 1, …, donors: ['b'] }])
 *   // → { extents: [copy 0's extent], donors: ['a'] }
 */
export function primariesOf(extents: readonly Extent[]): { extents: Extent[]; donors: string[] } {
  if (!extents.some((e) => e.copy > 0)) return { extents: [], donors: [] };
  const primaries = extents.filter((e) => e.copy === 0);
  return { extents: primaries, donors: [...new Set(primaries.flatMap((e) => e.donors))] };
}

/**
 * What an import job needs to fan copies ≥ 1 out donor to donor (issue 15): copy 0's extents,
 * its donors' endpoints and a read capability for them, valid for `ttlSeconds`. Undefined for
 * a single-copy placement (nothing to fan out).
 */
export async function fanOutOf(
  deps: FanOutDeps,
  datasetId: string,
  placement: readonly Extent[],
  who: string,
  ttlSeconds: number,
): Promise<FanOut | undefined> {
  const { extents, donors: ids } = primariesOf(placement);
  if (ids.length === 0) return undefined;
  const agents = await deps.agentsRepo.getMany(ids);
  return {
    primaries: extents,
    donors: agents.map((a) => ({
      id: a.id,
      url: deps.softState.heartbeatOf(a.id)?.url ?? a.url,
      state: 'live',
    })),
    readCapability: signCapability(deps.signingKeys.privateKey, {
      ds: datasetId,
      ops: ['read'],
      sub: `fan-out:${who}`,
      aud: ids,
      exp: Math.floor(Date.now() / 1000) + ttlSeconds,
    }),
  };
}
