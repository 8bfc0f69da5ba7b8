import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { buildApp, type BuildOptions } from './app.js';
import { ensureFirstAdmin } from './bootstrap.js';
import { loadConfig, type Config } from './config.js';
import { SLOW_STOP_MS } from './plugins/close-steps.js';
import { startEmbeddedPostgres, type EmbeddedPostgresHandle } from './db/embedded.js';
import { chooseEmbeddedPort } from './db/embedded-port.js';
import { clearStalePostmaster } from './db/stale-postmaster.js';
import { waitForDatabase } from './db/wait-for-database.js';
import { isLoopbackHost, serverNames } from './tls/server-names.js';
import { loadOrCreateTls } from './tls/tls-material.js';

export interface RunningManager {
  /** Base URL, e.g. `http://127.0.0.1:7400` (`https://` when it serves TLS). */
  url: string;
  /** `sha256:<hex>` of the manager's CA certificate (join tokens carry it). */
  caFingerprint: string;
  /** The CA certificate (PEM) clients pin. */
  caPem: string;
  app: FastifyInstance;
  /** The first admin's password, only on the start that created it. */
  adminPassword: string | null;
  config: Config;
  /** Stop the HTTP server, the pool and the embedded PostgreSQL (if started here). Idempotent. */
  close(): Promise<void>;
}

/**
 * Start a manager: configuration from the environment plus `overrides`; an embedded PostgreSQL
 * under `$FREELOADER_HOME/manager/pgdata` when no DATABASE_URL is set (on EMBEDDED_PG_PORT when
 * pinned, else on 7432 or the free port remembered in `manager/pg-port`); listen; and at first
 * start create the admin user. The CA and server certificate under `$FREELOADER_HOME/manager/tls`
 * are made at first start too (or the admin's files used); HTTPS is served when the manager
 * listens beyond loopback or `tls` is `on` (see {@link serveHttps}).
 *
 * @example
 *   const m = await startManager({ port: 0, home: '/tmp/fl' });
 *   console.log(m.url, m.adminPassword);
 *   await m.close();
 */
export async function startManager(
  overrides: Partial<Config> = {},
  opts: BuildOptions = {},
): Promise<RunningManager> {
  let config = loadConfig(process.env, overrides);
  let embedded: EmbeddedPostgresHandle | undefined;
  let app: FastifyInstance | undefined;
  let pgPortNote: string | undefined;
  // What happens to the embedded server before the app (and its logger) exists waits here.
  const early: string[] = [];
  const notice = (message: string): void => {
    if (app) app.log.warn(message);
    else early.push(message);
  };
  try {
    if (!config.databaseUrl) {
      ({ embedded, note: pgPortNote } = await startEmbedded(config, notice));
      config = { ...config, databaseUrl: embedded.url };
    } else {
      // An external server may still be starting (or restarting): wait for it with backoff.
      // (The app and its logger do not exist yet: the operator sees it on stderr at once.)
      await waitForDatabase(config.databaseUrl, (m) => console.error(`manager: ${m}`));
    }
    const tls = await loadOrCreateTls(
      config.home,
      serverNames(config.host, config.tlsNames),
      config.tlsCert && config.tlsKey
        ? {
            certFile: config.tlsCert,
            keyFile: config.tlsKey,
            ...(config.tlsCa ? { caFile: config.tlsCa } : {}),
          }
        : undefined,
    );
    const https = serveHttps(config);
    app = await buildApp(config, { ...opts, tls: { ...tls, https } });
    for (const message of early.splice(0)) app.log.warn(message);
    if (pgPortNote) app.log.warn(pgPortNote);
    const adminPassword = await ensureFirstAdmin(app);
    await app.listen({ host: config.host, port: config.port });
    const { port } = app.server.address() as AddressInfo;
    const host = config.host.includes(':') ? `[${config.host}]` : config.host;
    let closing: Promise<void> | undefined;
    const running = app;
    return {
      url: `${https ? 'https' : 'http'}://${host}:${port}`,
      caFingerprint: tls.fingerprint,
      caPem: tls.caPem,
      app,
      adminPassword,
      config,
      close: () =>
        (closing ??= (async () => {
          const steps = running.closeSteps;
          await steps.time('app closed', () => running.close());
          await steps.time('embedded PostgreSQL stopped', async () => embedded?.stop());
          logStop(running);
        })()),
    };
  } catch (e) {
    await app?.close().catch(() => undefined);
    await embedded?.stop().catch(() => undefined);
    throw e;
  }
}

/** One line with each step of the stop: a warning when it was slow (see SLOW_STOP_MS). */
function logStop(app: FastifyInstance): void {
  const summary = app.closeSteps.summary();
  if (summary.totalMs > SLOW_STOP_MS) app.log.warn(summary, 'manager stop was slow');
  else app.log.info(summary, 'manager stopped');
}

/**
 * Whether the manager serves HTTPS: always with `tls: on`, never with `off`, and with `auto`
 * when it listens beyond loopback (on loopback only this machine's users can reach it, and
 * `npm start` and the e2e cluster stay plain HTTP).
 *
 * @example serveHttps({ tls: 'auto', host: '0.0.0.0' })   // true
 * @example serveHttps({ tls: 'auto', host: '127.0.0.1' }) // false
 */
export function serveHttps(config: Pick<Config, 'tls' | 'host'>): boolean {
  if (config.tls === 'on') return true;
  if (config.tls === 'off') return false;
  return !isLoopbackHost(config.host);
}

/**
 * The embedded PostgreSQL under the home, on the port {@link chooseEmbeddedPort} picks; `note`
 * says so when the usual port was in use and another one was taken.
 */
async function startEmbedded(
  config: Config,
  notice: (message: string) => void,
): Promise<{ embedded: EmbeddedPostgresHandle; note?: string }> {
  const dataDir = join(config.home, 'manager', 'pgdata');
  // A server a killed manager left running holds the port too: stop it before choosing one.
  await clearStalePostmaster(dataDir, notice);
  const pgPort = await chooseEmbeddedPort(
    config.embeddedPgPort,
    join(config.home, 'manager', 'pg-port'),
  );
  const embedded = await startEmbeddedPostgres({
    dataDir,
    port: pgPort.port,
    ownedRoot: config.home,
    notice,
  });
  try {
    await pgPort.remember();
  } catch (e) {
    await embedded.stop();
    throw e;
  }
  if (pgPort.displaced === undefined) return { embedded };
  return {
    embedded,
    note:
      `embedded PostgreSQL: port ${pgPort.displaced} is in use, so it listens on ${pgPort.port} ` +
      `(remembered in ${config.home}/manager/pg-port; EMBEDDED_PG_PORT pins one)`,
  };
}
