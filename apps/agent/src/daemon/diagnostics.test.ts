import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
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
