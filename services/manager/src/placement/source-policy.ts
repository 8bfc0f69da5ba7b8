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
  ) {
    this.policy = new SourcePolicy(config.sourceAllow);
  }

  /** The policy with the admin's current setting. */
  async current(): Promise<SourcePolicy> {
    if (performance.now() - this.readAt > SOURCE_ALLOW_TTL_MS) {
      this.reading ??= getSourceAllow(this.pg)
        .then((entries) => {
          this.policy.setShared(entries);
          this.readAt = performance.now();
        })
        .finally(() => {
          this.reading = undefined;
        });
      await this.reading;
    }
    return this.policy;
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
