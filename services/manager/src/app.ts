import Fastify, { type FastifyInstance, type FastifyServerFactory } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { MAX_JSON_BODY } from '@freeloader/protocol';
import agentCredentials from './auth/agent-credentials.js';
import authPlugin from './auth/guards.js';
import type { Config } from './config.js';
import { errorHandler, notFoundBody } from './error-handler.js';
import configPlugin from './plugins/config.js';
import tlsPlugin, { type ManagerTrust } from './plugins/tls.js';
import { createManagerHttpsServer } from './tls/https-server.js';
import consolePlugin from './plugins/console.js';
import cookiePlugin from './plugins/cookie.js';
import metricsPlugin from './plugins/metrics.js';
import migrationsPlugin from './plugins/migrations.js';
import singletonsPlugin from './plugins/singletons.js';
import postgresPlugin from './plugins/postgres.js';
import swaggerPlugin from './plugins/swagger.js';
import throughputPlugin from './plugins/throughput.js';
import agentsRepo from './repositories/agents.js';
import auditRepo from './repositories/audit.js';
import auditHook from './auth/audit-hook.js';
import jobsRepo from './repositories/jobs.js';
import ratesRepo from './repositories/rates.js';
import joinTokensRepo from './repositories/join-tokens.js';
import namespaceRepo from './repositories/namespace.js';
import ownershipRepo from './repositories/ownership.js';
import placementRepo from './repositories/placement.js';
import reservationsRepo from './repositories/reservations.js';
import signingKeys from './repositories/settings.js';
import dataKeys from './repositories/dataset-keys.js';
import usersRepo from './repositories/users.js';
import api from './routes/index.js';
import eventFanOut from './plugins/event-fanout.js';
import softStatePlugin, { type SoftStatePluginOptions } from './soft-state-plugin.js';
import deadDonorWatch from './imports/dead-donor-watch.js';
import donorLoss from './placement/donor-loss.js';
import repairPlugin from './repair/plugin.js';
import sourcePolicy from './placement/source-policy.js';
import cacheRoom from './prefix/cache-room.js';
import prefixCaching from './prefix/plugin.js';
import historyPlugin from './history/plugin.js';
import jobSweeps from './jobs/job-sweeps.js';
import jobChannel from './jobs/job-channel.js';
import heartbeatFastPath from './agents/heartbeat-fast-path.js';
import closeConnections from './agents/close-connections.js';
import closeSteps from './plugins/close-steps.js';

export interface BuildOptions extends SoftStatePluginOptions {
  /** Where log lines go instead of stdout (tests read them back). */
  logStream?: { write(line: string): void };
  /**
   * The manager's CA (join tokens carry its fingerprint) and, when `https`, the server
   * certificate and key it serves HTTPS with (tls/tls-material.ts makes them).
   */
  tls?: ManagerTrust & { certPem: string; keyPem: string };
}

/** Secrets that must never reach a log line. */
const REDACT = [
  'req.headers.authorization',
  'req.headers.cookie',
  'res.headers["set-cookie"]',
  'headers.authorization',
  'headers.cookie',
  'password',
  '*.password',
  'token',
  '*.token',
  'credential',
  '*.credential',
  'capability',
  '*.capability',
  'privateKeyPem',
  '*.privateKeyPem',
  'databaseUrl',
  '*.databaseUrl',
];

/**
 * Build the manager app (plugins, repositories, routes) on `config.databaseUrl`, migrated and
 * ready, without listening. Tests drive it with `app.inject`.
 *
 * @example
 *   const app = await buildApp(loadConfig({}, { databaseUrl, logLevel: 'silent' }));
 *   const res = await app.inject({ method: 'GET', url: '/api/v1/health' });
 */
export async function buildApp(config: Config, opts: BuildOptions = {}): Promise<FastifyInstance> {
  const tls = opts.tls;
  // HTTPS with a clear answer to plain HTTP on the same port (see tls/https-server.ts).
  const serverFactory: FastifyServerFactory | undefined = tls?.https
    ? (handler) => createManagerHttpsServer(tls, handler)
    : undefined;
  const app = Fastify({
    logger: {
      level: config.logLevel,
      redact: { paths: REDACT, censor: '[redacted]' },
      ...(opts.logStream ? { stream: opts.logStream } : {}),
    },
    bodyLimit: MAX_JSON_BODY,
    forceCloseConnections: 'idle',
    ...(serverFactory ? { serverFactory } : {}),
  }).withTypeProvider<TypeBoxTypeProvider>();

  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler((req, reply) => {
    const path = req.url.split('?')[0]!;
    const isApi = path.startsWith('/api/') || path.startsWith('/docs');
    if (app.consoleRoot && req.method === 'GET' && !isApi) {
      return reply.sendFile('index.html');
    }
    return reply.status(404).send(notFoundBody(req.method, req.url));
  });

  try {
    // External plugins, in dependency order.
    await app.register(configPlugin, { config });
    await app.register(closeSteps);
    await app.register(tlsPlugin, {
      trust: tls ? { caPem: tls.caPem, fingerprint: tls.fingerprint, https: tls.https } : null,
    });
    await app.register(postgresPlugin);
    await app.register(migrationsPlugin);
    await app.register(metricsPlugin);
    await app.register(swaggerPlugin);
    await app.register(cookiePlugin);
    await app.register(singletonsPlugin);
    // Application plugins: repositories, keys, soft state, auth decorations.
    for (const repo of [
      usersRepo,
      joinTokensRepo,
      agentsRepo,
      namespaceRepo,
      ownershipRepo,
      placementRepo,
      reservationsRepo,
      jobsRepo,
      ratesRepo,
      auditRepo,
      signingKeys,
      dataKeys,
    ]) {
      await app.register(repo);
    }
    await app.register(sourcePolicy);
    await app.register(softStatePlugin, { clock: opts.clock, timers: opts.timers });
    // Before the fan-out, whose LISTEN session wakes the job channel for other managers' jobs.
    await app.register(jobChannel);
    await app.register(eventFanOut);
    await app.register(throughputPlugin);
    await app.register(donorLoss);
    await app.register(deadDonorWatch, { timers: opts.timers });
    await app.register(repairPlugin, { timers: opts.timers });
    await app.register(prefixCaching, { timers: opts.timers });
    await app.register(cacheRoom);
    await app.register(historyPlugin, { timers: opts.timers });
    await app.register(jobSweeps, { timers: opts.timers });
    await app.register(agentCredentials);
    await app.register(authPlugin);
    await app.register(auditHook);
    await app.register(heartbeatFastPath);
    await app.register(closeConnections);
    await app.register(api, { prefix: '/api/v1' });
    await app.register(consolePlugin);
    await app.ready();
  } catch (e) {
    await app.close().catch(() => undefined);
    throw e;
  }
  return app;
}
