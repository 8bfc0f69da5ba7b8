import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateSigningKeys, MIN_MORSEL_SIZE, signCapability } from '@freeloader/protocol';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sendFileSupported } from '../native/send-file.js';
import { FsStore } from '../store/fs-store.js';
import { MemoryStore } from '../store/memory-store.js';
import type { MorselStore } from '../store/store.js';
import { installLeanMorselPath } from './lean-morsel-path.js';
import { testPace, type TestGovernorState } from './test-pace.js';
import { buildMorselService, listenMorselService } from './morsel-service.js';

const keys = generateSigningKeys();
const agentId = randomUUID();
const ds = randomUUID();
const sha = (b: Uint8Array): string => createHash('sha256').update(b).digest('hex');
const cap = (id = ds) =>
  signCapability(keys.privateKeyPem, {
    ds: id,
    ops: ['read'],
    sub: 'test',
    aud: [agentId],
    exp: Math.floor(Date.now() / 1000) + 600,
  });

/** A raw HTTP/1.1 client: write bytes, read responses (head + content-length body) in order. */
class RawClient {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;

  private constructor(readonly socket: Socket) {
    socket.on('data', (c: Buffer) => {
      this.buf = Buffer.concat([this.buf, c]);
      for (const w of this.waiters.splice(0)) w();
    });
    socket.on('close', () => {
      this.closed = true;
      for (const w of this.waiters.splice(0)) w();
    });
  }

  static async open(base: string): Promise<RawClient> {
    const { hostname, port } = new URL(base);
    const socket = connect(Number(port), hostname);
    await new Promise((r) => socket.once('connect', r));
    return new RawClient(socket);
  }

  async response(): Promise<{ status: number; headers: Record<string, string>; body: Buffer }> {
    for (;;) {
      const end = this.buf.indexOf('\r\n\r\n');
      if (end >= 0) {
        const lines = this.buf.toString('latin1', 0, end).split('\r\n');
        const headers: Record<string, string> = {};
        for (const l of lines.slice(1)) {
          const c = l.indexOf(':');
          headers[l.slice(0, c).toLowerCase()] = l.slice(c + 1).trim();
        }
        const length = Number(headers['content-length'] ?? 0);
        if (this.buf.length >= end + 4 + length) {
          const body = Buffer.from(this.buf.subarray(end + 4, end + 4 + length));
          this.buf = this.buf.subarray(end + 4 + length);
          return { status: Number(lines[0]!.split(' ')[1]), headers, body };
        }
      }
      if (this.closed) throw new Error('connection closed before a whole response');
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
}

const get = (index: number, token = cap()) =>
  `GET /v1/morsels/${ds}/${index} HTTP/1.1\r\nHost: donor\r\nAuthorization: Bearer ${token}\r\n\r\n`;

/** The two kinds of store a donor can have: bodies from memory, and from files (sendfile). */
const stores: Array<[string, () => Promise<{ store: MorselStore; dispose: () => Promise<void> }>]> =
  [
    ['from memory', async () => ({ store: new MemoryStore(), dispose: async () => {} })],
    [
      'from files',
      async () => {
        const dir = await mkdtemp(join(tmpdir(), 'fl-lean-'));
        const store = await FsStore.open(dir);
        return {
          store,
          dispose: async () => {
            await store.close();
            await rm(dir, { recursive: true, force: true });
          },
        };
      },
    ],
  ];

describe.each(stores)('lean morsel path, bodies %s', (kind, makeStore) => {
  let store: MorselStore;
  let dispose: () => Promise<void>;
  const morsels = [0, 1, 2].map(() => randomBytes(MIN_MORSEL_SIZE));
  let app: FastifyInstance;
  let base: string;
  let served = 0;
  let lent = 0;
  let governor: TestGovernorState = 'idle';
  /** Bodies sent from the store's file when this machine can (the addon on Linux). */
  const inPlace = kind === 'from files' && sendFileSupported();

  beforeAll(async () => {
    ({ store, dispose } = await makeStore());
    const locate = store.locate?.bind(store);
    if (locate) {
      store.locate = (d, i) => {
        lent++;
        return locate(d, i);
      };
    }
    await store.create(ds, { morselSize: MIN_MORSEL_SIZE });
    for (const [i, m] of morsels.entries()) await store.put(ds, i, m);
    app = buildMorselService({
      store,
      agentId: () => agentId,
      managerPublicKey: () => keys.publicKeyPem,
      onServed: (n) => (served += n),
      pace: testPace(() => governor),
    });
    base = await listenMorselService(app, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await app.close();
    await dispose();
  });

  it('answers pipelined GETs in order, split anywhere, with hash and length', async () => {
    const c = await RawClient.open(base);
    const before = served;
    const lentBefore = lent;
    const bytes = Buffer.from(get(2) + get(0) + get(1));
    // Heads cut mid-line and mid-terminator still parse.
    const cuts = [0, 7, 40, get(2).length - 2, get(2).length + 1, bytes.length];
    for (let k = 1; k < cuts.length; k++) {
      c.socket.write(bytes.subarray(cuts[k - 1], cuts[k]));
      await new Promise((r) => setTimeout(r, 5));
    }
    for (const i of [2, 0, 1]) {
      const r = await c.response();
      expect(r.status).toBe(200);
      expect(r.headers['x-morsel-sha256']).toBe(sha(morsels[i]!));
      expect(r.body.equals(morsels[i]!)).toBe(true);
      // The lean path answered (node:http would add its keep-alive timeout header).
      expect(r.headers['keep-alive']).toBeUndefined();
    }
    expect(served - before).toBe(3 * MIN_MORSEL_SIZE);
    expect(lent - lentBefore).toBe(inPlace ? 3 : 0);
    c.socket.destroy();
  });

  it('answers many pipelined 1 MiB GETs to a reader that starts late, in order', async () => {
    const big = randomUUID();
    await store.create(big, { morselSize: 1 << 20 });
    const bodies = Array.from({ length: 12 }, () => randomBytes(1 << 20));
    for (const [i, b] of bodies.entries()) await store.put(big, i, b);
    const c = await RawClient.open(base);
    c.socket.pause();
    const order = [3, 0, 11, 5, 5, 1, 2, 4, 6, 7, 8, 9, 10];
    c.socket.write(order.map((i) => get(i, cap(big)).replace(ds, big)).join(''));
    // The donor fills the socket's buffers and waits; then the reader takes everything.
    await new Promise((r) => setTimeout(r, 200));
    c.socket.resume();
    for (const i of order) {
      const r = await c.response();
      expect(r.status).toBe(200);
      expect(r.body.equals(bodies[i]!)).toBe(true);
    }
    c.socket.destroy();
  });

  it('hands a flooded connection to the full service still reading', async () => {
    // More unanswered requests than a connection holds before it stops reading, with one that
    // goes to node:http while reading is stopped: node:http must still get the rest.
    const c = await RawClient.open(base);
    const flood = get(2).repeat(250);
    expect(flood.length).toBeGreaterThan(64 * 1024);
    c.socket.write(get(0) + get(1, 'nope') + flood);
    expect((await c.response()).status).toBe(200);
    expect((await c.response()).status).toBe(403);
    for (let i = 0; i < 250; i++) {
      const r = await c.response();
      expect([r.status, r.body.equals(morsels[2]!)]).toEqual([200, true]);
    }
    c.socket.destroy();
  });

  it('hands the connection to the full service at the first request it does not take', async () => {
    const c = await RawClient.open(base);
    // Good, bad capability, HEAD, good: answered in order, the last ones by Fastify.
    c.socket.write(get(0) + get(1, 'nope') + get(1).replace('GET', 'HEAD') + get(2));
    const ok = await c.response();
    expect([ok.status, ok.body.equals(morsels[0]!)]).toEqual([200, true]);
    const denied = await c.response();
    expect(denied.status).toBe(403);
    expect(JSON.parse(denied.body.toString()).error.code).toMatch(/^CAPABILITY_/);
    const head = await new Promise<string>((resolve) => {
      // A HEAD answer has a content-length but no body: read its head only.
      const wait = () => {
        const s = (c as unknown as { buf: Buffer }).buf.toString('latin1');
        const end = s.indexOf('\r\n\r\n');
        if (end < 0) return setTimeout(wait, 5);
        (c as unknown as { buf: Buffer }).buf = (c as unknown as { buf: Buffer }).buf.subarray(
          end + 4,
        );
        resolve(s.slice(0, end));
      };
      wait();
    });
    expect(head).toMatch(/^HTTP\/1\.1 200/);
    expect(head.toLowerCase()).toContain(`x-morsel-sha256: ${sha(morsels[1]!)}`);
    const last = await c.response();
    expect([last.status, last.body.equals(morsels[2]!)]).toEqual([200, true]);
    expect(last.headers['keep-alive']).toMatch(/timeout=/);
    c.socket.destroy();
  });

  it('leaves refused and paced reads to the governor path', async () => {
    try {
      governor = 'paused';
      const c = await RawClient.open(base);
      c.socket.write(get(0));
      expect((await c.response()).status).toBe(503);
      governor = 'capped';
      c.socket.write(get(1));
      const paced = await c.response();
      expect([paced.status, paced.body.equals(morsels[1]!)]).toEqual([200, true]);
      c.socket.destroy();
    } finally {
      governor = 'idle';
    }
  });

  it('answers what came before the client half-closed, then closes', async () => {
    const c = await RawClient.open(base);
    c.socket.end(get(0) + get(1));
    for (const i of [0, 1]) {
      const r = await c.response();
      expect([r.status, r.body.equals(morsels[i]!)]).toEqual([200, true]);
    }
    if (!c.closed) await new Promise((r) => c.socket.once('close', r));
  });

  it('answers a missing morsel with the service error', async () => {
    const c = await RawClient.open(base);
    c.socket.write(get(9));
    const r = await c.response();
    expect(r.status).toBe(404);
    expect(JSON.parse(r.body.toString()).error.code).toBe('MORSEL_NOT_FOUND');
    c.socket.destroy();
  });
});

describe('closing a service with lean connections open', () => {
  it('closes idle keep-alive connections at once', async () => {
    const store = new MemoryStore();
    await store.create(ds, { morselSize: MIN_MORSEL_SIZE });
    await store.put(ds, 0, randomBytes(MIN_MORSEL_SIZE));
    const app = buildMorselService({
      store,
      agentId: () => agentId,
      managerPublicKey: () => keys.publicKeyPem,
    });
    const base = await listenMorselService(app, '127.0.0.1', 0);
    const c = await RawClient.open(base);
    c.socket.write(get(0));
    expect((await c.response()).status).toBe(200);
    const started = Date.now();
    await app.close();
    // Not the 65 s keep-alive: the idle lean socket went with the service.
    expect(Date.now() - started).toBeLessThan(30_000);
    await new Promise((r) => setTimeout(r, 20));
    expect(c.closed).toBe(true);
  });
});

describe('handing a connection to node:http', () => {
  it('after the client half-closed, node:http still answers and closes', async () => {
    // node:http answers every request itself; the lean handler declines, but only after the
    // client's end has arrived.
    const server = createServer((req, res) => res.end(`node:http ${req.method} ${req.url}`));
    let declined = 0;
    installLeanMorselPath(
      server,
      async () => {
        await new Promise((r) => setTimeout(r, 50));
        declined++;
        return undefined;
      },
      60_000,
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const { port } = server.address() as AddressInfo;
      const c = await RawClient.open(`http://127.0.0.1:${port}`);
      c.socket.end(get(4));
      const r = await c.response();
      expect([r.status, r.body.toString()]).toEqual([200, `node:http GET /v1/morsels/${ds}/4`]);
      expect(declined).toBe(1);
      if (!c.closed) await new Promise((r) => c.socket.once('close', r));
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
