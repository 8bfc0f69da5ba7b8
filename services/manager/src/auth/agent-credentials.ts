import fp from 'fastify-plugin';
import {
  AGENT_AUTH_CACHE_TTL_MS,
  AGENT_REVOCATION_LOOKBACK_MS,
  AGENT_REVOCATION_POLL_MS,
} from '@freeloader/protocol';
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
 * Only SHA-256 digests are kept, as in the database. An entry is read again between half of
 * `ttlMs` and all of it (in the background; it answers meanwhile); a revocation drops it
 * ({@link forget}): at once on this manager, within AGENT_REVOCATION_POLL_MS when made elsewhere.
 * Unknown agents are not cached: a wrong id costs a lookup, as before.
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
  /** Background reads of expired entries, one per agent at a time. */
  private readonly refreshing = new Map<string, Promise<unknown>>();

  constructor(
    private readonly lookup: (agentId: string) => Promise<StoredCredential | null>,
    private readonly ttlMs = AGENT_AUTH_CACHE_TTL_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Null when the agent is unknown or the credential wrong; else whether it was revoked. An
   * expired entry still answers, and is read again in the background: at 10,000 agents about
   * 20 entries expire a second, and each made its heartbeat wait for a pool connection and a
   * query (1% of heartbeats: the p99 on a busy machine). Revocations do not depend on the
   * expiry: {@link forget} drops the entry, and the next request waits for the database.
   */
  async verify(agentId: string, credential: string): Promise<{ revoked: boolean } | null> {
    const presented = sha256(credential);
    let entry = this.entries.get(agentId);
    if (!entry) {
      entry = await this.load(agentId);
      if (!entry) return null;
    } else if (entry.expiresAt <= this.now() && !this.refreshing.has(agentId)) {
      const refresh = this.load(agentId)
        .catch(() => undefined)
        .finally(() => this.refreshing.delete(agentId));
      this.refreshing.set(agentId, refresh);
    }
    return sameDigest(entry.digest, presented) ? { revoked: entry.revoked } : null;
  }

  /**
   * What memory alone says, for the heartbeat fast path: true when `credential` is this
   * unrevoked agent's and its entry is fresh; undefined otherwise (unknown, expired, wrong,
   * revoked), for {@link verify} to decide on the ordinary path.
   */
  verifyFresh(agentId: string, credential: string): true | undefined {
    const entry = this.entries.get(agentId);
    if (!entry || entry.revoked || entry.expiresAt <= this.now()) return undefined;
    return sameDigest(entry.digest, sha256(credential)) ? true : undefined;
  }

  /** Ask the database; cache the answer unless the agent was forgotten meanwhile. */
  private async load(agentId: string): Promise<Entry | undefined> {
    const generation = this.generation;
    const stored = await this.lookup(agentId);
    if (!stored) {
      this.entries.delete(agentId);
      return undefined;
    }
    const entry = this.entryOf(stored);
    if (generation === this.generation) this.entries.set(agentId, entry);
    return entry;
  }

  /**
   * Load many agents at once (all of them, at start): after a manager restart every agent
   * comes back within one heartbeat interval, and one lookup each would be a storm.
   */
  prime(stored: readonly (StoredCredential & { id: string })[]): void {
    for (const s of stored) this.entries.set(s.id, this.entryOf(s));
  }

  private entryOf(stored: StoredCredential): Entry {
    // Spread: agents cached together must not all expire in one moment.
    const ttl = this.ttlMs * (0.5 + 0.5 * Math.random());
    return { digest: stored.digest, revoked: stored.revoked, expiresAt: this.now() + ttl };
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
 * The cache, emptied of an agent when it is revoked: every revocation on this manager (admin, a
 * leaving donor released) publishes an `agent revoked` event once committed, so the agent's next
 * request is refused; revocations made elsewhere are found by a poll of the agents revoked
 * lately (one small query every AGENT_REVOCATION_POLL_MS instead of one per request). All
 * credentials are loaded when the manager is ready.
 */
export default fp(
  async (app) => {
    const cache = new AgentCredentialCache((id) => app.agentsRepo.credentialOf(id));
    app.decorate('agentCredentials', cache);
    const unsubscribe = app.events.subscribe((e) => {
      if (e.type === 'agent' && e.state === 'revoked') cache.forget(e.agentId);
    });
    const poll = setInterval(() => {
      if (cache.size === 0) return;
      app.agentsRepo.revokedWithin(AGENT_REVOCATION_LOOKBACK_MS).then(
        (ids) => ids.forEach((id) => cache.forget(id)),
        (err: unknown) => app.log.warn({ err }, 'revoked-agents poll failed; retrying'),
      );
    }, AGENT_REVOCATION_POLL_MS);
    poll.unref();
    app.addHook('onReady', async () => {
      try {
        cache.prime(await app.agentsRepo.allCredentials());
      } catch (err) {
        // Not fatal: each agent is then looked up on its first request.
        app.log.warn({ err }, 'could not preload agent credentials');
      }
    });
    app.addHook('onClose', async () => {
      clearInterval(poll);
      unsubscribe();
    });
  },
  { name: 'agent-credentials', dependencies: ['agents-repo', 'soft-state'] },
);
