import type { FastifyBaseLogger } from 'fastify';
import fp from 'fastify-plugin';
import { LOCK_KEYS } from '../db/lock-keys.js';
import type { EventBus } from '../events.js';

/** Work to do when soft state declares a donor dead (fail its imports, abandon extensions, …). */
export type DonorLossHandler = (agentId: string) => void | Promise<void>;

/**
 * The one place a donor's death is acted on: a single subscriber to soft state's transition to
 * `dead` that runs every registered handler, in registration order. A handler that throws or
 * rejects is logged and the others still run. Repair (re-replicating what the donor held) will
 * register here too.
 */
export interface DonorLoss {
  /** Run `handler` for every donor declared dead; returns the function that unregisters it. */
  register(name: string, handler: DonorLossHandler): () => void;
  /** Stop listening to the bus. */
  close(): void;
}

/**
 * @example
 *   const loss = createDonorLoss({ events: app.events, log: app.log });
 *   const off = loss.register('imports', (agentId) => failImportsOf(agentId));
 */
export function createDonorLoss(deps: {
  events: Pick<EventBus, 'subscribe'>;
  log: Pick<FastifyBaseLogger, 'error'>;
  /**
   * Whether this manager is the one of its database that acts on deaths (every manager sees
   * the same death in the shared soft state); always, when absent.
   */
  acts?: () => Promise<boolean>;
}): DonorLoss {
  const handlers = new Map<symbol, { name: string; handler: DonorLossHandler }>();
  const failed = (name: string, agentId: string) => (err: unknown) =>
    deps.log.error({ err, agent: agentId, handler: name }, 'donor-loss handler failed');
  const runAll = (event: { agentId: string }): void => {
    for (const { name, handler } of [...handlers.values()]) {
      try {
        const done = handler(event.agentId);
        if (done) void done.catch(failed(name, event.agentId));
      } catch (err) {
        failed(name, event.agentId)(err);
      }
    }
  };
  const off = deps.events.subscribe((event) => {
    if (event.type !== 'agent' || event.state !== 'dead') return;
    if (!deps.acts) return runAll(event);
    void deps.acts().then(
      (acts) => acts && runAll(event),
      (err: unknown) => failed('acts', event.agentId)(err),
    );
  });
  return {
    register(name, handler) {
      const key = Symbol(name);
      handlers.set(key, { name, handler });
      return () => void handlers.delete(key);
    },
    close: off,
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    donorLoss: DonorLoss;
  }
}

/**
 * Decorates the app with its donor-loss hook (after soft state, before whoever registers). With
 * several managers on one database, only the holder of the dead-donor lock runs the handlers.
 */
export default fp(
  async (app) => {
    const loss = createDonorLoss({
      events: app.events,
      log: app.log,
      acts: () => app.singletons.locks.hold(LOCK_KEYS.deadDonors),
    });
    app.decorate('donorLoss', loss);
    app.addHook('onClose', async () => loss.close());
  },
  { name: 'donor-loss', dependencies: ['soft-state', 'singletons'] },
);
