import { connect, createServer, type Server, type Socket } from 'node:net';
import { freePort } from '../testing/free-port.js';

export interface TcpGate {
  /** `target` with host and port replaced by the gate's. */
  url: string;
  /** Connections accepted so far. */
  attempts(): number;
  /** Relay connections from now on. */
  open(): void;
  /** Drop every connection and refuse (accept and drop) new ones: the server went away. */
  shut(): void;
  close(): Promise<void>;
}

/**
 * A TCP gate in front of a real server (the test PostgreSQL): shut, it accepts connections and
 * drops them at once, as a server going down or not yet up; open, it relays them.
 *
 * @example const g = await tcpGate(new URL(db.url)); g.open(); … g.shut(); … await g.close();
 */
export async function tcpGate(target: URL): Promise<TcpGate> {
  let open = false;
  let attempts = 0;
  const sockets = new Set<Socket>();
  const track = (s: Socket): void => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const server: Server = createServer((socket) => {
    track(socket);
    attempts++;
    if (!open) return void socket.destroy();
    const upstream = connect(Number(target.port), target.hostname);
    track(upstream);
    socket.pipe(upstream).pipe(socket);
    upstream.on('error', () => socket.destroy());
    socket.on('error', () => upstream.destroy());
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', () => r()));
  const url = new URL(target);
  url.hostname = '127.0.0.1';
  url.port = String(port);
  const dropAll = (): void => {
    for (const s of sockets) s.destroy();
  };
  return {
    url: url.toString(),
    attempts: () => attempts,
    open: () => (open = true),
    shut: () => {
      open = false;
      dropAll();
    },
    close: async () => {
      dropAll();
      await new Promise((r) => server.close(r));
    },
  };
}
