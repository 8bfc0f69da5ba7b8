import { randomUUID } from 'node:crypto';
import fp from 'fastify-plugin';
import pg from 'pg';
import { restartDelayMs } from '../db/supervise.js';
import { parseJobNotice } from '../db/job-notices.js';
import { decodeNotify, encodeNotify } from '../event-notify-payload.js';
import { listenEvents, notifyEvent } from '../repositories/event-channel.js';
import { JOBS_CHANNEL, listenJobNotices } from '../repositories/job-notice-channel.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This manager's id on the event channel (and in logs). */
    managerId: string;
    /** Whether the LISTEN session is up (tests wait for it). */
    eventFanOut: { readonly listening: boolean };
  }
}

/**
 * Events fanned out to every manager of the database with LISTEN/NOTIFY: cluster-scoped events
 * published here are NOTIFYed (through the pool, fire and forget), and every notification from
 * another manager is delivered to this manager's SSE streams. The LISTEN session is a client of
 * its own; when it breaks (database restarted, network) it reconnects with backoff for as long
 * as the manager runs. Events raised while it is down do not reach this manager's streams: the
 * console refetches its views on reconnect anyway.
 *
 * The same session hears the job channel: a job another manager queued wakes the job channel
 * of its agent if that agent waits here. Job notices lost while the session was down are made
 * up for when it is back by waking every wait on this manager (each agent claims once).
 */
export default fp(
  async (app) => {
    const managerId = randomUUID();
    app.decorate('managerId', managerId);
    let client: pg.Client | undefined;
    let closing = false;
    let retry: NodeJS.Timeout | undefined;
    let everListened = false;

    app.events.setFanOut((event) => {
      const payload = encodeNotify(managerId, event);
      if (!payload) {
        app.log.warn({ type: event.type }, 'event too large to fan out; kept local');
        return;
      }
      notifyEvent(app.pg, payload).catch((err: unknown) =>
        app.log.warn({ err }, 'event fan-out failed'),
      );
    });

    const listen = async (attempt: number): Promise<void> => {
      if (closing) return;
      const c = new pg.Client({
        connectionString: app.config.databaseUrl,
        keepAlive: true,
        application_name: 'freeloader-manager-events',
      });
      const lost = (): void => {
        if (client !== c) return;
        client = undefined;
        void c.end().catch(() => undefined);
        if (!closing) {
          app.log.warn('event channel lost; reconnecting');
          schedule(0);
        }
      };
      c.on('error', lost);
      c.on('end', lost);
      c.on('notification', (n) => {
        if (n.channel === JOBS_CHANNEL) {
          const notice = parseJobNotice(n.payload);
          if (notice && notice.origin !== managerId) app.jobWaiters.notify(notice.agentId);
          return;
        }
        const envelope = decodeNotify(n.payload);
        if (envelope && envelope.from !== managerId) app.events.deliverRemote(envelope.event);
      });
      try {
        await c.connect();
        await listenEvents(c);
        await listenJobNotices(c);
        if (closing) return void (await c.end().catch(() => undefined));
        client = c;
        if (attempt > 0) app.log.info('event channel back');
        // Jobs other managers queued while this session was down were not heard of.
        if (everListened) app.jobWaiters.notify(null);
        everListened = true;
      } catch {
        await c.end().catch(() => undefined);
        schedule(attempt + 1);
      }
    };
    const schedule = (attempt: number): void => {
      if (closing) return;
      retry = setTimeout(() => void listen(attempt), restartDelayMs(attempt));
      retry.unref();
    };

    app.decorate('eventFanOut', {
      get listening() {
        return client !== undefined;
      },
    });
    await listen(0);
    app.addHook('onClose', async () => {
      closing = true;
      clearTimeout(retry);
      app.events.setFanOut(undefined);
      const c = client;
      client = undefined;
      await app.closeSteps.time('LISTEN client ended', () => c?.end().catch(() => undefined));
    });
  },
  { name: 'event-fanout', dependencies: ['postgres', 'soft-state', 'job-channel'] },
);
