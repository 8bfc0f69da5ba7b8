import { request, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../test/harness.js';

let h: Harness;
let port: number;
beforeAll(async () => {
  h = await startHarness();
  await h.app.listen({ host: '127.0.0.1', port: 0 });
  port = (h.app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await h?.close();
});

/** GET /api/v1/events on a connection of its own (no pooling), resolving at the headers. */
function openStream(headers: Record<string, string>): Promise<IncomingMessage> {
  return new Promise((resolve, reject) => {
    request({ host: '127.0.0.1', port, path: '/api/v1/events', headers, agent: false }, resolve)
      .on('error', reject)
      .end();
  });
}

/** Collect the stream's text until `predicate` holds (or 5 s pass). */
function readUntil(res: IncomingMessage, predicate: (text: string) => boolean): Promise<string> {
  return new Promise((resolve) => {
    let text = '';
    const done = () => {
      res.off('data', onData);
      clearTimeout(timer);
      resolve(text);
    };
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (predicate(text)) done();
    };
    const timer = setTimeout(done, 5_000);
    res.on('data', onData);
  });
}

describe('GET /events', () => {
  it('needs a user', async () => {
    const res = await openStream({});
    const body = await readUntil(res, (t) => t.includes('}}'));
    expect(res.statusCode).toBe(401);
    expect(JSON.parse(body).error.code).toBe('UNAUTHENTICATED');
  });

  it('streams bus events as server-sent events and unsubscribes on disconnect', async () => {
    const { authorization } = await h.login('scientist');
    // In-process subscribers (throughput history, watchers) are there before any stream.
    const base = h.app.events.listenerCount;
    const res = await openStream({ authorization });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    await readUntil(res, (t) => t.includes(': connected'));
    expect(h.app.events.listenerCount).toBe(base + 1);

    const pending = readUntil(res, (t) => t.includes('\n\n'));
    const agent = await h.enroll();
    const record = await pending;
    expect(record.split('\n')[0]).toBe('event: agent');
    expect(JSON.parse(record.split('\n')[1]!.slice('data: '.length))).toEqual({
      type: 'agent',
      agentId: agent.agentId,
      state: 'live',
    });

    res.destroy();
    for (let i = 0; i < 50 && h.app.events.listenerCount > base; i++) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(h.app.events.listenerCount).toBe(base);
  });
});
