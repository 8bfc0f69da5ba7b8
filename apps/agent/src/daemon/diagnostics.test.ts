import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JoinDiagnostics, agentAuthorization, measureDiskRead } from './diagnostics.js';

let dir: string;
const log = pino({ level: 'silent' });

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-diag-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('join diagnostics', () => {
  it('times a real disk read and leaves no scratch file behind', async () => {
    const { rate, cached } = await measureDiskRead(dir, 4 * 1024 * 1024);
    expect(rate).toBeGreaterThan(1e6);
    expect(typeof cached).toBe('boolean');
    expect(await readdir(dir)).toEqual([]);
  });

  it('reports a saved probe in heartbeats without measuring again', async () => {
    const saved = {
      diskReadRate: 1,
      downloadRate: 2,
      uploadRate: 3,
      measuredAt: '2026-01-01T00:00:00.000Z',
    };
    await writeFile(join(dir, 'diagnostics.json'), JSON.stringify(saved));
    const d = new JoinDiagnostics({
      dir,
      managerUrl: 'http://127.0.0.1:9',
      authorization: () => undefined,
      log,
      enabled: true,
    });
    expect(d.heartbeatFields()).toEqual({});
    d.ensure();
    await expect.poll(() => d.heartbeatFields()).toEqual({ diagnostics: saved });
  });

  it('tries a failed network probe again, and measures again a part saved as not measured', async () => {
    // A stand-in for the manager's two probe routes whose first download answer is a 503 (as a
    // manager too busy to answer in the probe window looks to the agent).
    let downloads = 0;
    const server: Server = createServer((req, res) => {
      if (req.url?.startsWith('/api/v1/diagnostics/download')) {
        if (++downloads === 1) return void res.writeHead(503).end();
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        const block = Buffer.alloc(64 * 1024);
        const pump = () => {
          while (res.write(block));
        };
        res.on('drain', pump);
        pump();
        req.socket.once('close', () => res.destroy());
        return;
      }
      req.resume();
      req.once('end', () => res.writeHead(200).end('{}'));
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const sub = join(dir, 'retry');
    await mkdir(sub);
    await writeFile(
      join(sub, 'diagnostics.json'),
      JSON.stringify({
        diskReadRate: 1,
        downloadRate: null,
        uploadRate: 3,
        measuredAt: '2026-01-01T00:00:00.000Z',
      }),
    );
    try {
      const d = new JoinDiagnostics({
        dir: sub,
        managerUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        authorization: () => 'Bearer agent.a.c',
        log,
        enabled: true,
      });
      d.ensure();
      await expect
        .poll(() => d.heartbeatFields().diagnostics?.downloadRate ?? undefined, {
          timeout: 60_000,
        })
        .toBeGreaterThan(0);
      expect(downloads).toBeGreaterThanOrEqual(2);
      // The heartbeat has the new rate before the file is rewritten (the write is awaited
      // after): wait for the file too, or a busy machine reads the old one (a CI run did).
      const savedRate = async (): Promise<number | undefined> => {
        const text = await readFile(join(sub, 'diagnostics.json'), 'utf8');
        try {
          return (JSON.parse(text) as { downloadRate: number | null }).downloadRate ?? undefined;
        } catch {
          return undefined; // caught mid-write
        }
      };
      await expect.poll(savedRate, { timeout: 60_000 }).toBeGreaterThan(0);
      d.stop();
    } finally {
      server.closeAllConnections();
      server.close();
    }
  });

  it('does nothing when disabled', async () => {
    const d = new JoinDiagnostics({
      dir: join(dir, 'missing'),
      managerUrl: 'http://127.0.0.1:9',
      authorization: () => 'Bearer x',
      log,
      enabled: false,
    });
    d.ensure();
    await new Promise((r) => setTimeout(r, 50));
    expect(d.heartbeatFields()).toEqual({});
  });

  it.each([
    [null, undefined],
    [{ agentId: 'a', credential: 'c' }, 'Bearer agent.a.c'],
  ])('authorization header for %o', (identity, header) => {
    expect(agentAuthorization(identity)).toBe(header);
  });
});
