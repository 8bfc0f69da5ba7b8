import { createServer } from 'node:net';
import { readFile, rename, writeFile } from 'node:fs/promises';
import { DEFAULT_EMBEDDED_PG_PORT, FreeLoaderError } from '@freeloader/protocol';

export interface EmbeddedPortChoice {
  port: number;
  /** The port that was wanted but is in use, when `port` is a replacement for it. */
  displaced?: number;
  /** Record `port` for later starts (a no-op when the user pinned it). */
  remember(): Promise<void>;
}

/**
 * The port the embedded PostgreSQL should listen on (127.0.0.1).
 *
 * A port the user pinned (`EMBEDDED_PG_PORT`) is used as is; when something already listens
 * there the error names the variable, because only the user can resolve that. Otherwise the
 * port remembered in `rememberFile` (or 7432 the first time) is used when free, and a free port
 * from the kernel when not — another PostgreSQL on 7432 must not stop a local manager. The
 * choice is written back by `remember()` after the server started, so later starts reuse it.
 *
 * @example
 *   const { port, remember } = await chooseEmbeddedPort(undefined, '/home/u/.freeloader/manager/pg-port');
 *   // 7432, or e.g. 40163 when 7432 is taken; after the server is up:
 *   await remember();
 */
export async function chooseEmbeddedPort(
  pinned: number | undefined,
  rememberFile: string,
  defaultPort: number = DEFAULT_EMBEDDED_PG_PORT,
): Promise<EmbeddedPortChoice> {
  if (pinned !== undefined) {
    if (pinned !== 0 && !(await portFree(pinned))) {
      throw new FreeLoaderError(
        'UNAVAILABLE',
        `EMBEDDED_PG_PORT=${pinned} is already in use on 127.0.0.1 (another PostgreSQL?); ` +
          'choose another port, or unset EMBEDDED_PG_PORT to let the manager pick a free one',
      );
    }
    // Port 0 means "any": PostgreSQL cannot take 0, so the kernel picks one now.
    return { port: pinned || (await kernelPort()), remember: async () => undefined };
  }
  const preferred = (await rememberedPort(rememberFile)) ?? defaultPort;
  const free = await portFree(preferred);
  const port = free ? preferred : await kernelPort();
  return {
    port,
    ...(free ? {} : { displaced: preferred }),
    remember: async () => {
      if (port === (await rememberedPort(rememberFile))) return;
      // Written whole then renamed: a crash never leaves half a number behind.
      await writeFile(`${rememberFile}.tmp`, `${port}\n`, { mode: 0o600 });
      await rename(`${rememberFile}.tmp`, rememberFile);
    },
  };
}

/** The port recorded in `file`, or undefined when there is none (or it is not a port). */
async function rememberedPort(file: string): Promise<number | undefined> {
  const text = await readFile(file, 'utf8').catch(() => '');
  const port = Number(text.trim());
  return Number.isInteger(port) && port > 0 && port < 65536 ? port : undefined;
}

/** True when nothing listens on 127.0.0.1:`port` (checked by binding it for a moment). */
function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.unref();
    server.once('error', () => resolve(false));
    server.listen({ port, host: '127.0.0.1', exclusive: true }, () =>
      server.close(() => resolve(true)),
    );
  });
}

/** A port the kernel considers free on 127.0.0.1 right now. */
function kernelPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}
