import type { FastifyInstance, FastifyRequest } from 'fastify';
import {
  CAPABILITY_TTL_S,
  signCapability,
  type AgentState,
  type DatasetMap,
  type DatasetView,
} from '@freeloader/protocol';
import { principalOf } from '../auth/guards.js';
import type { PlacementDeps } from '../placement/placement-deps.js';
import { donorSpeeds, type RateEstimate } from '../placement/rate-estimates.js';
import { faultsOfDataset } from '../repositories/morsel-faults.js';
import { throttleFields } from '../throttle-view.js';

/** The morsels a map request asks the hashes (and tags) of; undefined: every morsel. */
export interface MapRange {
  first: number;
  count: number | undefined;
}

/**
 * An encrypted dataset's key and the tags of `range` (every morsel's without one) as the map
 * carries them; nothing for one in clear. Tags are 16 bytes a morsel: a 1 TiB dataset's are
 * 16 MiB, 32 MiB of hex, so a first page carries its own range only.
 */
async function sealingOf(
  app: FastifyInstance,
  datasetId: string,
  range: MapRange | undefined,
): Promise<{ dataKey?: string; tags?: string }> {
  // Both at once: a dataset in clear has no tag rows, so its tags query finds nothing quickly.
  const [key, tags] = await Promise.all([
    app.dataKeys.get(datasetId),
    app.placementRepo.getTags(datasetId, range?.first, range?.count),
  ]);
  if (!key) return {};
  return { dataKey: key.toString('base64'), tags: tags.toString('hex') };
}

/**
 * The JSON map of `dataset` for `req`'s principal: extents, donors with their state and
 * predicted rate, the hashes (and a user's key and tags) of `range`, bad copies and a signed
 * read capability; the read is counted. Its first byte is what a reader waits for, so every
 * independent read starts at once: the donor list comes from its own query rather than after
 * the extents (measured on a 1 TiB map of 912 donors at load 15–18: extents → tags → agents →
 * rates → read count one after another took 110–170 ms before the first byte).
 *
 * @example reply.send(await mapBody(app, req, dataset, { first: 0, count: 4096 }))
 */
export async function mapBody(
  app: FastifyInstance,
  req: FastifyRequest,
  dataset: DatasetView,
  range: MapRange | undefined,
): Promise<DatasetMap> {
  const placement: PlacementDeps = app;
  const who = principalOf(req);
  const donorsOf = async () => {
    const ids = await app.placementRepo.donorsOfDataset(dataset.id);
    return Promise.all([app.agentsRepo.endpointsOf(ids), donorSpeeds(placement, ids, who)]);
  };
  const [extents, hashes, faults, sealing, [agents, { rates }]] = await Promise.all([
    app.placementRepo.getPlacement(dataset.id),
    app.placementRepo.getHashes(dataset.id, range?.first, range?.count),
    faultsOfDataset(app.pg, dataset.id),
    // The key goes with a user's read capability only: donors never read plaintext.
    req.user ? sealingOf(app, dataset.id, range) : {},
    donorsOf(),
    // A read: eviction's recency, and the count that may earn a longer prefix (issue 7).
    app.prefixCache.extensions.noteRead(dataset, who),
  ]);
  const donors = agents.map((a) => {
    const state: AgentState = a.revoked ? 'revoked' : app.softState.stateOf(a.id);
    const hb = app.softState.heartbeatOf(a.id);
    return {
      id: a.id,
      url: hb?.url ?? a.url,
      state,
      usable: state === 'live',
      ...throttleFields(hb, a.throttle),
      ...observedRate(rates.get(a.id)),
    };
  });
  const exp = Math.floor(Date.now() / 1000) + CAPABILITY_TTL_S;
  const capability = signCapability(app.signingKeys.privateKey, {
    ds: dataset.id,
    ops: ['read'],
    sub: who,
    exp,
  });
  return {
    dataset,
    extents,
    donors,
    hashes: hashes.toString('hex'),
    ...(range ? { hashesFirst: range.first } : {}),
    ...sealing,
    capability,
    capabilityExpiresAt: new Date(exp * 1000).toISOString(),
    // Copies a scrub, start-up check or client found bad: readers skip them until repaired.
    ...(faults.length > 0
      ? { badCopies: faults.map((f) => ({ morsel: f.morsel, donor: f.agentId })) }
      : {}),
  };
}

/**
 * A donor's `rate` in a map: only one observed by readers (this client's, else every client's).
 * The join-time probe is left out: it measures an upload to the manager while every donor of a
 * site starts at once, and on the 8-donor LAN testbed (all links 12 MB/s) the first read dealt
 * by it gave one donor 109 MB and another 44 MB of 512 MiB, so the read ran at 58.6 MB/s against
 * 91–92 MB/s for the next ones, dealt by observed rates. Placement still weighs probes.
 *
 * @example observedRate({ rate: 11e6, source: 'probe' }) // {}
 */
export function observedRate(est: RateEstimate | undefined): { rate?: number } {
  return est && est.source !== 'probe' ? { rate: est.rate } : {};
}
