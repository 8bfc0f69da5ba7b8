import { createServer, type Server, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lowWaterSupported, READ_LOW_WATER_BYTES } from '../native/socket-low-water.js';
import { MorselConnection } from './morsel-connection.js';

// A raw TCP server lets each test answer byte for byte, including the broken answers.
let server: Server | undefined;
async function serve(onRequest: (socket: Socket, n: number) => void): Promise<number> {
  let n = 0;
  server = createServer((socket) => {
    socket.on('data', () => onRequest(socket, n++));
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  return (server.address() as { port: number }).port;
}
afterEach(async () => {
  if (server) await new Promise((r) => server!.close(r));
  server = undefined;
});

/** GET `/x` `times` over `c`, one after another; each must answer 200 with `body`. */
async function getTimes(c: MorselConnection, times: number, body: Buffer): Promise<void> {
  for (let i = 0; i < times; i++) {
    const target = Buffer.alloc(1 << 20);
    const res = await c.get('/x', 'Bearer t', target);
    expect(res).toMatchObject({ status: 200, length: body.length });
    expect(target.subarray(0, res.length).equals(body)).toBe(true);
  }
}

const ok = (body: Buffer): Buffer =>
  Buffer.concat([Buffer.from(`HTTP/1.1 200 OK\r\ncontent-length: ${body.length}\r\n\r\n`), body]);

describe('MorselConnection', () => {
  it('reads a body trickled in small packets to its last byte under the low-water mark', async () => {
    // The socket wakes the reader per READ_LOW_WATER_BYTES of body, never past the body's end:
    // a mark left at 64 KiB for a 1,000-byte tail, or for the next answer's head, would leave
    // those bytes unread until the stall timer failed the request (stallMs below).
    expect(lowWaterSupported()).toBe(process.platform === 'linux');
    const body = Buffer.alloc(READ_LOW_WATER_BYTES * 2 + 1_000);
    for (let i = 0; i < body.length; i++) body[i] = i % 251;
    const port = await serve((s) => {
      const msg = ok(body);
      let at = 0;
      const drip = (): void => {
        if (s.destroyed || at >= msg.length) return;
        s.write(msg.subarray(at, (at += 9_000)));
        setTimeout(drip, 2);
      };
      drip();
    });
    const c = new MorselConnection('127.0.0.1', port, 'h', 1_500);
    await getTimes(c, 2, body);
    c.destroy();
  });

  it('reads bodies split across packets and reuses the connection', async () => {
    const body = Buffer.alloc(300_000, 7);
    let sockets = 0;
    const port = await serve((s) => {
      const msg = ok(body);
      s.write(msg.subarray(0, 10));
      setTimeout(() => s.write(msg.subarray(10, 200_000)), 5);
      setTimeout(() => s.write(msg.subarray(200_000)), 10);
    });
    server!.on('connection', () => sockets++);
    const c = new MorselConnection('127.0.0.1', port, 'h', 2000);
    await getTimes(c, 3, body);
    expect(sockets).toBe(1);
    c.destroy();
  });

  it('pipelines: answers arriving back to back in one packet go to their requests in order', async () => {
    const bodies = [Buffer.alloc(1000, 1), Buffer.alloc(0), Buffer.alloc(70_000, 3)];
    let seen = 0;
    const port = await serve((s, _n) => {
      // Answer only once all three requests arrived, all in one write.
      seen++;
      if (seen === 1) setTimeout(() => s.write(Buffer.concat(bodies.map(ok))), 20);
    });
    const c = new MorselConnection('127.0.0.1', port, 'h', 2000);
    const targets = bodies.map(() => Buffer.alloc(1 << 17));
    const res = await Promise.all(targets.map((t) => c.get('/x', 'Bearer t', t)));
    expect(c.inFlight).toBe(0);
    res.forEach((r, i) => {
      expect(r).toMatchObject({ status: 200, length: bodies[i]!.length });
      expect(targets[i]!.subarray(0, r.length).equals(bodies[i]!)).toBe(true);
    });
    c.destroy();
  });

  it('returns error statuses with their body', async () => {
    const port = await serve((s) => {
      const body = '{"error":{"code":"MORSEL_NOT_FOUND","message":"no"}}';
      s.write(`HTTP/1.1 404 Not Found\r\ncontent-length: ${body.length}\r\n\r\n${body}`);
    });
    const c = new MorselConnection('127.0.0.1', port, 'h', 2000);
    const res = await c.get('/x', 'Bearer t', Buffer.alloc(16));
    expect(res.status).toBe(404);
    expect(JSON.parse(res.errorBody).error.code).toBe('MORSEL_NOT_FOUND');
    c.destroy();
  });

  it.each([
    [
      'a stall',
      (s: Socket) => s.write('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc'),
      'TIMEOUT',
    ],
    [
      'a close mid-body',
      (s: Socket) => s.end('HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nabc'),
      'UNAVAILABLE',
    ],
    [
      'a body larger than a morsel',
      (s: Socket) => s.write('HTTP/1.1 200 OK\r\ncontent-length: 999\r\n\r\n'),
      'HASH_MISMATCH',
    ],
    ['garbage', (s: Socket) => s.write('SSH-2.0-OpenSSH\r\n\r\n'), 'UNAVAILABLE'],
    [
      'chunked encoding',
      (s: Socket) => s.write('HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n'),
      'UNAVAILABLE',
    ],
  ])('fails cleanly on %s', async (_name, answer, code) => {
    const port = await serve((s) => answer(s));
    const c = new MorselConnection('127.0.0.1', port, 'h', 300);
    await expect(c.get('/x', 'Bearer t', Buffer.alloc(512))).rejects.toMatchObject({ code });
    c.destroy();
  });

  it('reports a refused connection', async () => {
    const port = await serve(() => undefined);
    await new Promise((r) => server!.close(r));
    server = undefined;
    const c = new MorselConnection('127.0.0.1', port, 'h', 1000);
    await expect(c.get('/x', 'Bearer t', Buffer.alloc(16))).rejects.toMatchObject({
      code: 'UNAVAILABLE',
    });
  });
});
