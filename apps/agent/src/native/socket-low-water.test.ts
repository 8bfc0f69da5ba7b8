import { connect, createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lowWaterOf, lowWaterSupported, setLowWater } from './socket-low-water.js';

let server: Server | undefined;
const open: Socket[] = [];
afterEach(async () => {
  for (const s of open.splice(0)) s.destroy();
  if (server) await new Promise((r) => server!.close(r));
  server = undefined;
});

async function connected(): Promise<Socket> {
  server = createServer((s) => open.push(s));
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const socket = connect({ host: '127.0.0.1', port });
  open.push(socket);
  await new Promise((r) => socket.once('connect', r));
  return socket;
}

describe('socket low-water mark (SO_RCVLOWAT through the native addon)', () => {
  it.runIf(lowWaterSupported())('sets and reads back a connected socket’s mark', async () => {
    const socket = await connected();
    expect(lowWaterOf(socket)).toBe(1);
    expect(setLowWater(socket, 65_536)).toBe(true);
    expect(lowWaterOf(socket)).toBe(65_536);
    expect(setLowWater(socket, 0.5)).toBe(true); // never below one byte
    expect(lowWaterOf(socket)).toBe(1);
  });

  it('declines a socket with no descriptor yet, and says so', () => {
    const socket = connect({ host: '127.0.0.1', port: 9 });
    socket.on('error', () => undefined);
    open.push(socket);
    socket.destroy();
    expect(setLowWater(socket, 65_536)).toBe(false);
    expect(lowWaterOf(socket)).toBeUndefined();
  });
});
