import {
  createServer as createHttpServer,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer, type Server } from 'node:https';
import type { Socket } from 'node:net';
import { FreeLoaderError, TLS_FIRST_BYTE_TIMEOUT_MS } from '@freeloader/protocol';

/** The first byte of every TLS connection: a handshake record. */
const TLS_HANDSHAKE = 0x16;

/**
 * How long an idle HTTPS connection stays open (milliseconds): Fastify's default for the servers
 * it creates, which it does not apply to one from `serverFactory`. Node's own default, 5 s, is
 * the agents' heartbeat interval, and undici keeps a connection only until 1 s before the
 * server's `Keep-Alive: timeout` hint: every idle agent's connection was closed before its next
 * heartbeat, so each heartbeat paid a new TCP and TLS handshake on both ends (seen with strace
 * on an idle donor of the W=12 testbed, session 15: the manager client was 38 % of its CPU).
 */
export const MANAGER_KEEP_ALIVE_MS = 72_000;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * The answer a plain-HTTP request to the HTTPS port gets: API clients a TLS_REQUIRED error
 * naming the https:// URL to use; browsers (anything else) a redirect there, so typing the
 * console's address without the scheme still lands on it.
 */
function answerPlainHttp(req: IncomingMessage, res: ServerResponse): void {
  const target = `https://${req.headers.host ?? 'this-host'}${req.url ?? '/'}`;
  res.setHeader('connection', 'close');
  if ((req.url ?? '').startsWith('/api/')) {
    const err = new FreeLoaderError(
      'TLS_REQUIRED',
      `this manager speaks HTTPS only: use ${target.replace(/(\/\/[^/]+).*/, '$1')} (a plain-HTTP request reached its TLS port)`,
    );
    res.writeHead(err.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(err.toBody()));
    return;
  }
  res.writeHead(308, { location: target });
  res.end();
}

/**
 * An HTTPS server (for Fastify's `serverFactory`) that also answers plain HTTP on the same
 * port clearly instead of dropping the connection mid-handshake: the first byte of each
 * connection tells a TLS handshake (0x16) from an HTTP request line.
 *
 * @example Fastify({ serverFactory: (handler) => createManagerHttpsServer(tls, handler) })
 */
export function createManagerHttpsServer(
  tls: { certPem: string; keyPem: string },
  handler: Handler,
): Server {
  const server = createHttpsServer({ cert: tls.certPem, key: tls.keyPem }, handler);
  server.keepAliveTimeout = MANAGER_KEEP_ALIVE_MS;
  const plain = createHttpServer(answerPlainHttp);
  // tls.Server starts TLS in its own 'connection' listener: it runs only once the first
  // byte says TLS.
  const startTls = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  server.on('connection', (socket: Socket) => {
    // A client that resets before its first byte must not take the manager down.
    socket.on('error', () => socket.destroy());
    socket.setTimeout(TLS_FIRST_BYTE_TIMEOUT_MS, () => socket.destroy());
    socket.once('data', (first: Buffer) => {
      socket.setTimeout(0);
      socket.pause();
      socket.unshift(first);
      // The unshifted bytes must reach whoever takes the socket over: TLS replays a socket's
      // buffered data into the handshake itself (resuming would drop it to no listener); the
      // HTTP parser reads it through 'data' events once the socket flows again.
      if (first[0] === TLS_HANDSHAKE) {
        for (const listener of startTls) listener.call(server, socket);
      } else {
        plain.emit('connection', socket);
        socket.resume();
      }
    });
  });
  return server;
}
