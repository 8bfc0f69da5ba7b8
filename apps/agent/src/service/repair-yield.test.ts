import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  generateSigningKeys,
  MIN_MORSEL_SIZE,
  REPAIR_YIELD_MAX_HOLD_MS,
  repairSubject,
  signCapability,
} from '@freeloader/protocol';
import { ForegroundYield } from '../governor/foreground-yield.js';
import { FsStore } from '../store/fs-store.js';
import { buildMorselService, listenMorselService } from './morsel-service.js';

// A donor serving a client's read holds repair reads back (issue 15: repair never beats
// foreground readers). Real store, real HTTP; the yield rate is tiny so a held repair read is
// held for the whole cap, which no load can make shorter.
const MS = MIN_MORSEL_SIZE;
const keys = generateSigningKeys();
const agentId = randomUUID();
/** Longest hold of one repair read (the service's cap). */
const HOLD_MS = REPAIR_YIELD_MAX_HOLD_MS;

describe('repair reads yield to client reads on a donor', () => {
  let dir: string;
  let store: FsStore;
  let app: FastifyInstance;
  let base: string;
  // Busy for a minute after a client read: the test decides when the client stops.
  const fg = new ForegroundYield({ quietMs: 60_000, yieldRateBps: 1024 });
  const ds = randomUUID();
  const token = (sub: string) =>
    signCapability(keys.privateKeyPem, {
      ds,
      ops: ['read'],
      sub,
      aud: [agentId],
      exp: Math.floor(Date.now() / 1000) + 600,
    });
  const get = async (index: number, sub: string) => {
    const res = await fetch(`${base}/v1/morsels/${ds}/${index}`, {
      headers: { authorization: `Bearer ${token(sub)}` },
    });
    expect(res.status).toBe(200);
    return Buffer.from(await res.arrayBuffer());
  };

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'fl-yield-'));
    store = await FsStore.open(dir);
    await store.create(ds, { morselSize: MS });
    for (let i = 0; i < 4; i++) await store.put(ds, i, randomBytes(MS));
    app = buildMorselService({
      store,
      agentId: () => agentId,
      managerPublicKey: () => keys.publicKeyPem,
      foreground: fg,
    });
    base = await listenMorselService(app, '127.0.0.1', 0);
  });
  afterAll(async () => {
    await app.close();
    await store.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('serves repair reads at once while no client reads, and they do not count as clients', async () => {
    for (let i = 0; i < 4; i++) await get(i, repairSubject('dest'));
    expect(fg.busy()).toBe(false);
  });

  it('holds a repair read while a client reads; the client is not held', async () => {
    await get(0, 'client:alice');
    expect(fg.busy()).toBe(true);
    // The first repair morsel takes the yield bucket's small burst; the second waits its turn.
    await get(1, repairSubject('dest'));
    const order: string[] = [];
    const started = performance.now();
    const repair = get(2, repairSubject('dest')).then(() => {
      order.push('repair');
      return performance.now() - started;
    });
    // Sent after the repair read, answered before it.
    await get(3, 'client:bob').then(() => order.push('client'));
    const heldMs = await repair;
    expect(order).toEqual(['client', 'repair']);
    expect(heldMs).toBeGreaterThanOrEqual(HOLD_MS - 50);
  });
});
