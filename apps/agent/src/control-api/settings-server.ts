import type { AddressInfo } from 'node:net';
import Fastify, { type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { FreeLoaderError } from '@freeloader/protocol';
import { installErrorHandler } from '../service/error-handler.js';
import { issueLocalToken, writeSettingsUrl } from '../state/local-token.js';
import type { SettingsBackend } from './control-backend.js';
import { EnrollLocal, OwnerActivity, PauseRequest, SettingsPatch } from './local-api.js';
import { bearerMatches, isLoopbackHost } from './loopback-auth.js';
import { DEFAULT_UI_DIR, uiFile } from './ui-files.js';
import { DEFAULT_SETTINGS_PORT } from './settings-port.js';

export { DEFAULT_SETTINGS_PORT };

export interface SettingsServerOptions {
  backend: SettingsBackend;
  /** State directory: the token (0600) and the URL are written here. */
  dir: string;
  /** Loopback only; default 127.0.0.1. */
  host?: string;
  /** Default DEFAULT_SETTINGS_PORT; a busy port falls back to any free one. 0 = any. */
  port?: number;
  uiDir?: string;
}

export interface SettingsServer {
  /** Base URL, without the token. */
  url: string;
  token: string;
  /** The URL a person opens: the token rides in the fragment, which browsers never send. */
  openUrl: string;
  /** Swap what the API talks to (the tray: setup, then the enrolled daemon). */
  setBackend(backend: SettingsBackend): void;
  close(): Promise<void>;
}

/**
 * The agent's settings page and API on 127.0.0.1, behind a token issued at start and written
 * to `<dir>/settings-token` (mode 0600). The page itself holds no secret and is served to
 * anyone on loopback; every `/api` call needs `Authorization: Bearer <token>`. Host names other
 * than loopback ones are refused (no DNS rebinding).
 *
 * @example
 *   const s = await startSettingsServer({ backend: new DaemonBackend(daemon, info), dir });
 *   console.error(`settings at ${s.openUrl}`);
 */
export async function startSettingsServer(opts: SettingsServerOptions): Promise<SettingsServer> {
  const host = opts.host ?? '127.0.0.1';
  if (!['127.0.0.1', 'localhost', '::1'].includes(host)) {
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `the settings page listens on loopback only, not ${host}`,
    );
  }
  const token = await issueLocalToken(opts.dir);
  let backend = opts.backend;
  const app = buildSettingsApp(() => backend, token, opts.uiDir ?? DEFAULT_UI_DIR);
  const port = opts.port ?? DEFAULT_SETTINGS_PORT;
  try {
    await app.listen({ host, port });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EADDRINUSE' || port === 0) throw e;
    await app.listen({ host, port: 0 });
  }
  const addr = app.server.address() as AddressInfo;
  const url = `http://${addr.family === 'IPv6' ? `[${addr.address}]` : addr.address}:${addr.port}/`;
  await writeSettingsUrl(opts.dir, url);
  return {
    url,
    token,
    openUrl: `${url}#token=${token}`,
    setBackend: (b) => {
      backend = b;
    },
    close: () => app.close(),
  };
}

/** The Fastify app behind {@link startSettingsServer} (exported for tests with inject()). */
export function buildSettingsApp(
  backend: () => SettingsBackend,
  token: string,
  uiDir: string,
): FastifyInstance {
  const app = Fastify({ logger: false, bodyLimit: 64 * 1024 });
  const r = app.withTypeProvider<TypeBoxTypeProvider>();
  installErrorHandler(app);
  app.addHook('onRequest', async (req) => {
    if (!isLoopbackHost(req.headers.host)) {
      throw new FreeLoaderError('FORBIDDEN', 'address the settings page as 127.0.0.1 or localhost');
    }
    if (req.url.startsWith('/api/') && !bearerMatches(req.headers.authorization, token)) {
      throw new FreeLoaderError('UNAUTHENTICATED', 'the local settings token is missing or wrong');
    }
  });
  app.addHook('onSend', async (_req, reply) => {
    reply.header('cache-control', 'no-store');
    reply.header('x-content-type-options', 'nosniff');
    reply.header('x-frame-options', 'DENY');
    reply.header(
      'content-security-policy',
      "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:",
    );
  });

  r.get('/api/state', async () => backend().state());
  r.patch('/api/settings', { schema: { body: SettingsPatch } }, async (req) => {
    await backend().update(req.body);
    return backend().state();
  });
  r.post('/api/pause', { schema: { body: PauseRequest } }, async (req) => {
    await backend().pause(req.body.span);
    return backend().state();
  });
  r.post('/api/resume', async () => {
    await backend().resume();
    return backend().state();
  });
  r.post('/api/owner-activity', { schema: { body: OwnerActivity } }, async (req, reply) => {
    await backend().reportIdle(req.body.idleMs);
    return reply.code(204).send();
  });
  r.post('/api/leave', async () => {
    const b = backend();
    if (!b.leave) throw new FreeLoaderError('CONFLICT', 'this agent has not joined a cache');
    await b.leave();
    return backend().state();
  });
  r.post('/api/enroll', { schema: { body: EnrollLocal } }, async (req) => {
    const b = backend();
    if (!b.enroll) throw new FreeLoaderError('CONFLICT', 'this agent is enrolled already');
    await b.enroll(req.body);
    return backend().state();
  });

  app.get('/*', async (req, reply) => {
    const file = await uiFile(uiDir, req.url.split(/[?#]/)[0]!);
    if (!file) {
      throw new FreeLoaderError(
        'NOT_FOUND',
        req.url === '/' ? 'the settings UI is not built: run `npm run build`' : `no ${req.url}`,
      );
    }
    return reply.type(file.type).send(file.body);
  });
  return app;
}
