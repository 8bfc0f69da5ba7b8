import fp from 'fastify-plugin';
import { SourcePolicy } from '@freeloader/sources';
import type { Config } from '../config.js';
import type { Queryable } from '../db/pool.js';
import { getSourceAllow } from '../repositories/settings.js';

/** How long the admin's allow list is trusted before it is read again (another manager may set it). */
const SOURCE_ALLOW_TTL_MS = 5_000;

/**
 * The manager's source policy: `FREELOADER_SOURCE_ALLOW` (fixed at start) plus the admin's
 * setting, read again when older than {@link SOURCE_ALLOW_TTL_MS}. Probes use it, and every
 * heartbeat answer hands its entries to the agents, which enforce it on their own connections.
 */
export class ManagerSourcePolicy {
  readonly policy: SourcePolicy;
  private readAt = -Infinity;
  /** The read in flight: heartbeats arriving meanwhile share it instead of each querying. */
  private reading: Promise<void> | undefined;

  constructor(
    private readonly pg: Queryable,
    config: Pick<Config, 'sourceAllow'>,
    private readonly ttlMs = SOURCE_ALLOW_TTL_MS,
  ) {
    this.policy = new SourcePolicy(config.sourceAllow);
  }

  /**
   * The policy with the admin's current setting. Only the first call waits for the database;
   * later ones answer with the setting in memory and refresh it in the background when it is
   * older than SOURCE_ALLOW_TTL_MS: every heartbeat asks, and at 2,000 heartbeats/s (10,000
   * agents) those arriving during the read all waited on it, a queued pool connection on a
   * busy machine, every 5 s (manager-scale: heartbeat p99 in the read's latency).
   */
  async current(): Promise<SourcePolicy> {
    if (this.readAt === -Infinity) {
      await this.refresh();
    } else if (performance.now() - this.readAt > this.ttlMs) {
      // A failed refresh keeps the setting in memory; the next call tries again.
      this.refresh().catch(() => undefined);
    }
    return this.policy;
  }

  /**
   * The policy when its setting was read once (refreshed in the background as {@link current}
   * does); undefined before the first read.
   */
  peek(): SourcePolicy | undefined {
    if (this.readAt === -Infinity) return undefined;
    if (performance.now() - this.readAt > this.ttlMs) this.refresh().catch(() => undefined);
    return this.policy;
  }

  /** Read the setting (one read at a time: callers meanwhile share it). */
  private refresh(): Promise<void> {
    this.reading ??= getSourceAllow(this.pg)
      .then((entries) => {
        this.policy.setShared(entries);
        this.readAt = performance.now();
      })
      .finally(() => {
        this.reading = undefined;
      });
    return this.reading;
  }

  /** Take a setting just written on this manager at once. */
  adopt(entries: readonly string[]): void {
    this.policy.setShared(entries);
    this.readAt = performance.now();
  }
}

declare module 'fastify' {
  interface FastifyInstance {
    sourcePolicy: ManagerSourcePolicy;
  }
}

export default fp(
  async (app) => {
    app.decorate('sourcePolicy', new ManagerSourcePolicy(app.pg, app.config));
  },
  { name: 'source-policy', dependencies: ['config', 'postgres'] },
);
