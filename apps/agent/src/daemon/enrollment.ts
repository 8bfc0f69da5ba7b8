import { hostname } from 'node:os';
import type { ManagerClient } from '../manager-client.js';
import { saveIdentity, type Identity } from '../state/identity.js';

/** What joining needs: the manager, where to keep the identity, and what to tell the manager. */
export interface EnrollmentDeps {
  manager: Pick<ManagerClient, 'enroll' | 'managerUrls'>;
  /** State directory; the identity is written there (mode 0600). */
  dir: string;
  /** This agent's morsel service URL, as clients should reach it. */
  url: string;
  /** Defaults to the host name. */
  name?: string;
  quotaBytes: number;
  bandwidthOnly: boolean;
}

/** The identity a join produced, and the heartbeat interval the manager asked for. */
export interface Enrolled {
  identity: Identity;
  heartbeatIntervalMs: number;
}

/**
 * Join the cache with a one-time token and persist the identity before anything uses it, so a
 * crash right after joining never leaves an agent the manager knows but that forgot who it is.
 *
 * @example const { identity } = await enroll(token, { manager, dir, url, quotaBytes, bandwidthOnly: false });
 */
export async function enroll(token: string, deps: EnrollmentDeps): Promise<Enrolled> {
  const name = deps.name ?? hostname();
  const res = await deps.manager.enroll({
    token,
    name,
    url: deps.url,
    quotaBytes: deps.bandwidthOnly ? 0 : deps.quotaBytes,
    bandwidthOnly: deps.bandwidthOnly,
  });
  const identity: Identity = {
    agentId: res.agentId,
    credential: res.credential,
    managerUrl: deps.manager.managerUrls,
    managerPublicKey: res.managerPublicKey,
    name,
    enrolledAt: new Date().toISOString(),
  };
  await saveIdentity(deps.dir, identity);
  return { identity, heartbeatIntervalMs: res.heartbeatIntervalMs };
}
