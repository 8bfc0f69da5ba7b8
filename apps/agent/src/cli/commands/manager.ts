import type { Command } from 'commander';
import { importManager } from '../manager-package.js';
import { adminPasswordPath, freeloaderHome } from '../paths.js';
import { runUntilSignal } from '../run-until-signal.js';
import { parseListen } from './listen.js';

interface ManagerOptions {
  listen: string;
  home: string;
  databaseUrl?: string;
  tls?: 'auto' | 'on' | 'off';
  tlsCert?: string;
  tlsKey?: string;
  tlsCa?: string;
  masterKeyFile?: string;
}

export function registerManager(program: Command): void {
  const manager = program.command('manager');
  registerKeyExport(manager);
  manager
    .description('run the manager (embedded PostgreSQL unless DATABASE_URL is set)')
    .option(
      '--listen <host:port>',
      'API and console address',
      process.env.MANAGER_LISTEN ?? '127.0.0.1:7400',
    )
    .option('--home <dir>', 'FreeLoader home (embedded database, keys)', freeloaderHome())
    .option('--database-url <url>', 'use this PostgreSQL server instead of the embedded one')
    .option(
      '--tls <mode>',
      'HTTPS: auto (beyond loopback only), on, off (or MANAGER_TLS; default auto)',
    )
    .option('--tls-cert <file>', "your certificate (PEM) instead of the manager's own CA's")
    .option('--tls-key <file>', 'the key of --tls-cert (PEM)')
    .option('--tls-ca <file>', 'the CA that issued --tls-cert (default: its last certificate)')
    .option(
      '--master-key-file <file>',
      'the 0600 key wrapping dataset keys (or FREELOADER_MASTER_KEY_FILE; default <home>/manager/master.key); every manager of one database needs the same',
    )
    .action(async (opts: ManagerOptions) => {
      const { startManager } = await importManager();
      const listen = parseListen(opts.listen);
      const manager = await startManager({
        home: opts.home,
        host: listen.host,
        port: listen.port,
        ...(opts.databaseUrl ? { databaseUrl: opts.databaseUrl } : {}),
        logLevel: process.env.LOG_LEVEL ?? 'info',
        // Unset flags leave the environment's MANAGER_TLS* in force.
        ...(opts.tls ? { tls: opts.tls } : {}),
        ...(opts.tlsCert ? { tlsCert: opts.tlsCert } : {}),
        ...(opts.tlsKey ? { tlsKey: opts.tlsKey } : {}),
        ...(opts.tlsCa ? { tlsCa: opts.tlsCa } : {}),
        ...(opts.masterKeyFile ? { masterKeyFile: opts.masterKeyFile } : {}),
      });
      // Handlers first, the ready line after: a SIGTERM sent the moment the line shows (a
      // supervisor, a test) landed before them under load and killed the process outright.
      const stopped = runUntilSignal(async () => {
        await manager.close();
        // A last line, so whoever watches the terminal or log knows the stop finished.
        console.error('manager stopped');
      });
      console.error(`manager: ${manager.url} (API docs at ${manager.url}/docs)`);
      // Not a secret: what agents' join tokens and `freeloader login --ca-fingerprint` pin.
      console.error(`manager: CA fingerprint ${manager.caFingerprint}`);
      if (manager.adminPassword) {
        // A redirected log keeps the password for anyone who reads it later: only a terminal
        // sees it; the 0600 file always has it.
        const file = adminPasswordPath({ FREELOADER_HOME: opts.home });
        console.error(
          process.stderr.isTTY && process.stdout.isTTY
            ? `first start: admin password is ${manager.adminPassword} (shown once; also in ${file})`
            : `first start: admin password written to ${file} (mode 0600)`,
        );
      }
      await stopped;
    });
}

/**
 * `freeloader manager key export --out FILE`: the only backup of the master key. Without it a
 * lost key file makes every encrypted dataset unreadable; restore by copying FILE back to
 * <home>/manager/master.key (mode 0600) or starting with `--master-key-file FILE`. The export is
 * recorded in the manager's database (`--database-url`/DATABASE_URL, else the embedded one of a
 * manager running with `--home`) by the key's check value, so every manager using the key stops
 * warning.
 */
function registerKeyExport(manager: Command): void {
  manager
    .command('key')
    .description("the manager's master key (wraps every dataset key)")
    .command('export')
    .description(
      'copy the master key to a new 0600 file (a backup; restore with --master-key-file FILE)',
    )
    .requiredOption('--out <file>', 'where to write it (must not exist)')
    // --home and --master-key-file are `manager`'s own options (freeloader manager --home DIR key export …
    // or after export: Commander hands them to `manager` either way).
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{
        out: string;
        home: string;
        masterKeyFile?: string;
        databaseUrl?: string;
      }>();
      const { exportAndRecord, masterKeyPath } = await importManager();
      const masterKeyFile = opts.masterKeyFile ?? process.env.FREELOADER_MASTER_KEY_FILE;
      const keyPath = masterKeyPath({
        home: opts.home,
        ...(masterKeyFile ? { masterKeyFile } : {}),
      });
      const databaseUrl = opts.databaseUrl ?? process.env.DATABASE_URL;
      const recorded = await exportAndRecord({
        keyPath,
        out: opts.out,
        home: opts.home,
        ...(databaseUrl ? { databaseUrl } : {}),
      });
      console.error(
        `master key of ${keyPath} written to ${opts.out} (mode 0600): keep it off this machine; ` +
          `restore with --master-key-file ${opts.out} or by copying it to ${keyPath}`,
      );
      // Every manager of the database stops warning at its next start once the export is
      // recorded there; a note beside the key gets there when this key's manager next starts.
      console.error(
        recorded.recordedIn === 'database'
          ? 'export recorded in the database: no manager using this key warns about it any more'
          : `export noted beside the key (${recorded.why}); the manager records it in its ` +
              'database at its next start',
      );
    });
}
