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
 * Copy 0's extents that overlap any copy ≥ 1 extent of `own` (a donor's share): the primaries
 * that donor copies from. Empty when it holds only copy-0 morsels.
 *
 * @example primariesFor([p0a, p0b], [{ copy: 1, first: 0, count: 8, … }]) // → those of p0a, p0b covering 0…7
 */
export function primariesFor(primaries: readonly Extent[], own: readonly Extent[]): Extent[] {
  const ranges = own.filter((e) => e.copy > 0);
  return primaries.filter((p) =>
    ranges.some((r) => p.first < r.first + r.count && r.first < p.first + p.count),
  );
}

/**
 * What import jobs need to fan copies ≥ 1 out donor to donor (issue 15), per receiving donor:
 * the copy-0 extents it copies from, their donors' endpoints and a read capability for just
 * those donors, valid for `ttlSeconds`. Endpoints are looked up once per import, so a job's
 * fan-out grows with the primaries it copies from, not with every donor of the import.
 * Undefined for a single-copy placement (nothing to fan out); the signer answers undefined for
 * a donor holding only copy-0 morsels.
 */
export async function fanOutSigner(
  deps: FanOutDeps,
  datasetId: string,
  placement: readonly Extent[],
  who: string,
  ttlSeconds: number,
): Promise<((own: readonly Extent[]) => FanOut | undefined) | undefined> {
  const { extents: primaries, donors: ids } = primariesOf(placement);
  if (ids.length === 0) return undefined;
  const endpoints = new Map(
    (await deps.agentsRepo.getMany(ids)).map((a) => [
      a.id,
      { id: a.id, url: deps.softState.heartbeatOf(a.id)?.url ?? a.url, state: 'live' as const },
    ]),
  );
  const exp = Math.floor(Date.now() / 1000) + ttlSeconds;
  return (own) => {
    const from = primariesFor(primaries, own);
    if (from.length === 0) return undefined;
    const aud = [...new Set(from.flatMap((e) => e.donors))];
    return {
      primaries: from,
      donors: aud.flatMap((id) => endpoints.get(id) ?? []),
      readCapability: signCapability(deps.signingKeys.privateKey, {
        ds: datasetId,
        ops: ['read'],
        sub: `fan-out:${who}`,
        aud,
        exp,
      }),
    };
  };
}
