import { hostname } from 'node:os';
import { parseJoinToken } from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import { pinManagerCa } from '../manager-tls.js';
import { saveIdentity, type Identity } from '../state/identity.js';

/** What joining needs: the manager, where to keep the identity, and what to tell the manager. */
export interface EnrollmentDeps {
  manager: Pick<ManagerClient, 'enroll' | 'managerUrls' | 'baseUrl' | 'trustCa'>;
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
 * A token that carries the manager's CA fingerprint pins that CA first: the manager must show
 * it (CA_MISMATCH otherwise), the secret then travels only over a connection verified against
 * it, and the identity keeps it for every later call.
 *
 * @example const { identity } = await enroll(token, { manager, dir, url, quotaBytes, bandwidthOnly: false });
 */
export async function enroll(token: string, deps: EnrollmentDeps): Promise<Enrolled> {
  const name = deps.name ?? hostname();
  const { secret, caFingerprint } = parseJoinToken(token);
  let managerCa: string | undefined;
  // Over plain HTTP (a loopback manager) there is no certificate to pin: checking the CA there
  // would protect nothing, and managers of one database with their own CAs would refuse.
  if (caFingerprint && deps.manager.baseUrl.startsWith('https:')) {
    managerCa = await pinManagerCa(deps.manager.baseUrl, caFingerprint);
    deps.manager.trustCa(managerCa);
  }
  const res = await deps.manager.enroll({
    token: secret,
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
    ...(managerCa ? { managerCa } : {}),
    name,
    enrolledAt: new Date().toISOString(),
  };
  await saveIdentity(deps.dir, identity);
  return { identity, heartbeatIntervalMs: res.heartbeatIntervalMs };
}
