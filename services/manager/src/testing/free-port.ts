import { createServer } from 'node:net';

/**
 * A TCP port free on 127.0.0.1 right now (for servers that cannot take port 0, such as
 * PostgreSQL). The one port finder of the tests and e2e (`@freeloader/manager/testing`).
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
