import fp from 'fastify-plugin';
import { AGENT_AUTH_CACHE_TTL_MS } from '@freeloader/protocol';
import { sameDigest, sha256 } from '../db/stored-secrets.js';

/** What the database says of an agent's credential (see AgentsRepo.credentialOf). */
export interface StoredCredential {
  digest: Buffer;
  revoked: boolean;
}

interface Entry extends StoredCredential {
  /** this.now() ms after which the database is asked again. */
  expiresAt: number;
}

/**
 * Agent credentials checked from memory: every agent authenticates every few seconds
 * (heartbeat, job channel), and asking the database each time was one round trip per request.
 * Only SHA-256 digests are kept, as in the database. An entry lives `ttlMs`; revoking on this
 * manager drops it at once ({@link forget}), and the TTL bounds how long a revocation made
 * elsewhere goes unseen. Unknown agents are not cached: a wrong id costs a lookup, as before.
 *
 * @example
 *   const creds = new AgentCredentialCache((id) => repo.credentialOf(id));
 *   await creds.verify(id, credential); // { revoked: false } — the database asked once
 *   await creds.verify(id, credential); // { revoked: false } — from memory
 *   await creds.verify(id, 'wrong');    // null
 */
export class AgentCredentialCache {
  private readonly entries = new Map<string, Entry>();
  /** Bumped by forget(): a lookup that started before a revocation must not cache its answer. */
  private generation = 0;

  constructor(
    private readonly lookup: (agentId: string) => Promise<StoredCredential | null>,
    private readonly ttlMs = AGENT_AUTH_CACHE_TTL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Null when the agent is unknown or the credential wrong; else whether it was revoked. */
  async verify(agentId: string, credential: string): Promise<{ revoked: boolean } | null> {
    const presented = sha256(credential);
    let entry = this.entries.get(agentId);
    if (!entry || entry.expiresAt <= this.now()) {
      const generation = this.generation;
      const stored = await this.lookup(agentId);
      if (!stored) {
        this.entries.delete(agentId);
        return null;
      }
      entry = { ...stored, expiresAt: this.now() + this.ttlMs };
      if (generation === this.generation) this.entries.set(agentId, entry);
    }
    return sameDigest(entry.digest, presented) ? { revoked: entry.revoked } : null;
  }

  /** The agent was revoked (or changed): its next request asks the database. */
  forget(agentId: string): void {
    this.generation++;
    this.entries.delete(agentId);
  }

  /** Agents whose credential is in memory (metrics, tests). */
  get size(): number {
    return this.entries.size;
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    agentCredentials: AgentCredentialCache;
  }
}

/**
 * The cache, emptied of an agent when it is revoked: every revocation (admin, a leaving donor
 * released) publishes an `agent revoked` event as soon as it is committed, so the agent's next
 * request is refused.
 */
export default fp(
  async (app) => {
    const cache = new AgentCredentialCache((id) => app.agentsRepo.credentialOf(id));
    app.decorate('agentCredentials', cache);
    const unsubscribe = app.events.subscribe((e) => {
      if (e.type === 'agent' && e.state === 'revoked') cache.forget(e.agentId);
    });
    app.addHook('onClose', async () => unsubscribe());
  },
  { name: 'agent-credentials', dependencies: ['agents-repo', 'soft-state'] },
);
