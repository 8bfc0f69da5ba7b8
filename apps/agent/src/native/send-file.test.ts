import { randomBytes } from 'node:crypto';
import { mkdtemp, open, rm, writeFile, type FileHandle } from 'node:fs/promises';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { morselCipherKind } from './morsel-cipher.js';
import { sendFileSpan, sendFileSupported } from './send-file.js';

let dir: string;
let server: Server | undefined;
let file: FileHandle | undefined;
const sockets: Socket[] = [];
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-sendfile-'));
});
afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  if (server) await new Promise((r) => server!.close(r));
  server = undefined;
  await file?.close();
  file = undefined;
  await rm(dir, { recursive: true, force: true });
});

/** A connected pair on loopback: `sender` is the server's side, `reader` the client's (paused). */
async function pair(): Promise<{ sender: Socket; reader: Socket }> {
  const accepted = new Promise<Socket>((resolve) => {
    server = createServer((s) => {
      sockets.push(s);
      s.on('error', () => undefined);
      resolve(s);
    });
  });
  await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
  const reader = connect({ host: '127.0.0.1', port: (server!.address() as { port: number }).port });
  reader.pause();
  reader.on('error', () => undefined);
  sockets.push(reader);
  return { sender: await accepted, reader };
}

/** Everything `reader` receives until it has `bytes` (or the connection ends). */
function readAll(reader: Socket, bytes: number): Promise<Buffer> {
  return new Promise((resolve) => {
    const parts: Buffer[] = [];
    let got = 0;
    const done = () => resolve(Buffer.concat(parts));
    reader.on('data', (c: Buffer) => {
      parts.push(c);
      got += c.length;
      if (got >= bytes) done();
    });
    reader.once('close', done);
    reader.resume();
  });
}

async function fileWith(bytes: Buffer): Promise<number> {
  const path = join(dir, 'data');
  await writeFile(path, bytes);
  file = await open(path, 'r');
  return file.fd;
}

describe('sendFileSpan (head by send, body by sendfile, through the native addon)', () => {
  it('is available on this machine when the addon is (npm ci builds it)', () => {
    // The addon's other half is checked in morsel-cipher.test.ts: a CI machine has it.
    if (process.platform === 'linux' && morselCipherKind() === 'native') {
      expect(sendFileSupported()).toBe(true);
    }
  });

  it.runIf(sendFileSupported())(
    'sends the head then the span, byte for byte, several times the socket buffer',
    async () => {
      const bytes = randomBytes(24 << 20);
      const fd = await fileWith(bytes);
      const { sender, reader } = await pair();
      const head = Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 8388608\r\n\r\n', 'latin1');
      // 8 MiB from an odd offset; the reader starts late, so the sender must wait to be writable.
      const span = { fd, position: 3 * (1 << 20) + 17, length: 8 << 20 };
      const sending = sendFileSpan(sender, head, span);
      await new Promise((r) => setTimeout(r, 50));
      const received = readAll(reader, head.length + span.length);
      await sending;
      const got = await received;
      expect(got.length).toBe(head.length + span.length);
      expect(got.subarray(0, head.length).equals(head)).toBe(true);
      expect(
        got
          .subarray(head.length)
          .equals(bytes.subarray(span.position, span.position + span.length)),
      ).toBe(true);
      // The socket is still Node's and usable after: an ordinary write follows the body.
      const tail = readAll(reader, 5);
      sender.write('after');
      expect((await tail).toString()).toBe('after');
    },
  );

  it.runIf(sendFileSupported())('rejects with EIO when the file ends before the span', async () => {
    const fd = await fileWith(randomBytes(100_000));
    const { sender, reader } = await pair();
    const received = readAll(reader, Number.MAX_SAFE_INTEGER);
    await expect(
      sendFileSpan(sender, Buffer.from('head'), { fd, position: 0, length: 200_000 }),
    ).rejects.toMatchObject({ code: 'EIO' });
    sender.destroy();
    // What went out is the head and the bytes the file had: never padding.
    expect((await received).length).toBe(4 + 100_000);
  });

  it.runIf(sendFileSupported())('rejects when the reader resets mid-body', async () => {
    const fd = await fileWith(randomBytes(32 << 20));
    const { sender, reader } = await pair();
    const sending = sendFileSpan(sender, Buffer.alloc(0), { fd, position: 0, length: 32 << 20 });
    await new Promise((r) => setTimeout(r, 100));
    reader.resetAndDestroy();
    await expect(sending).rejects.toMatchObject({
      code: expect.stringMatching(/EPIPE|ECONNRESET/),
    });
  });

  it.runIf(sendFileSupported())(
    'rejects soon after JavaScript destroys the socket while the send waits',
    async () => {
      const fd = await fileWith(randomBytes(32 << 20));
      const { sender, reader } = await pair();
      const sending = sendFileSpan(sender, Buffer.alloc(0), { fd, position: 0, length: 32 << 20 });
      await new Promise((r) => setTimeout(r, 100));
      sender.destroy();
      await expect(sending).rejects.toMatchObject({ code: 'ERR_SOCKET_CLOSED' });
      // Its own descriptor closed with the wait: the reader sees the connection end.
      await new Promise((r) => {
        reader.once('close', r);
        reader.resume();
      });
    },
  );

  it.runIf(sendFileSupported())('refuses a destroyed socket at once', async () => {
    const fd = await fileWith(randomBytes(10));
    const { sender } = await pair();
    sender.destroy();
    await expect(
      sendFileSpan(sender, Buffer.alloc(0), { fd, position: 0, length: 10 }),
    ).rejects.toMatchObject({ code: 'ERR_SOCKET_CLOSED' });
  });
});
