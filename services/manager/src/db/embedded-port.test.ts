import { createServer, type Server } from 'node:net';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chooseEmbeddedPort } from './embedded-port.js';

let dir: string;
const held: Server[] = [];
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'fl-pg-port-'));
});
afterAll(async () => {
  await Promise.all(held.map((s) => new Promise((r) => s.close(r))));
  await rm(dir, { recursive: true, force: true });
});

/** Occupy a free port on 127.0.0.1 for the rest of the file, as another server would. */
async function occupy(): Promise<number> {
  const server = createServer();
  held.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return (server.address() as { port: number }).port;
}

describe('chooseEmbeddedPort', () => {
  it('uses the default port when free, another one when it is taken (first start)', async () => {
    const free = await occupy();
    await new Promise((r) => held.pop()!.close(r));
    expect((await chooseEmbeddedPort(undefined, join(dir, 'none-1'), free)).port).toBe(free);

    const taken = await occupy();
    const choice = await chooseEmbeddedPort(undefined, join(dir, 'none-2'), taken);
    expect(choice.port).not.toBe(taken);
    expect(choice.displaced).toBe(taken);
    await choice.remember();
    expect((await readFile(join(dir, 'none-2'), 'utf8')).trim()).toBe(String(choice.port));
  });

  it('moves off a taken remembered port, remembers the new one, and reuses it', async () => {
    const file = join(dir, 'pg-port');
    const taken = await occupy();
    await writeFile(file, `${taken}\n`);
    const first = await chooseEmbeddedPort(undefined, file);
    expect(first.port).not.toBe(taken);
    expect(first.port).toBeGreaterThan(0);
    await first.remember();
    expect((await readFile(file, 'utf8')).trim()).toBe(String(first.port));

    const second = await chooseEmbeddedPort(undefined, file);
    expect(second.port).toBe(first.port);
  });

  it('names EMBEDDED_PG_PORT when the pinned port is taken', async () => {
    const taken = await occupy();
    await expect(chooseEmbeddedPort(taken, join(dir, 'unused'))).rejects.toThrow(
      new RegExp(`EMBEDDED_PG_PORT=${taken} is already in use.*unset EMBEDDED_PG_PORT`),
    );
  });

  it('never records a pinned port', async () => {
    const file = join(dir, 'pinned-port');
    const pinned = await chooseEmbeddedPort(0, file);
    expect(pinned.port).toBeGreaterThan(0);
    await pinned.remember();
    await expect(readFile(file)).rejects.toThrow();
  });
});
