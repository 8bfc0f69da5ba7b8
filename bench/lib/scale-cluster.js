import pg from 'pg';
import { join } from 'node:path';
import { startManagerProcess } from './manager-process.js';
import { cpuTimes } from './proc-stat.js';
import { groupCpuSeconds } from './process-tree.js';

/** The shared PostgreSQL two managers use when no MANAGER_SCALE_DATABASE_URL is given. */
const SHARED_SERVER = 'postgres://postgres@127.0.0.1:5432';

/**
 * @typedef {object} ScaleCluster
 * @property {import('./manager-process.js').ManagerProcess[]} managers
 * @property {string} adminPassword the first manager's
 * @property {string} database 'embedded', or the shared server's database name
 * @property {() => Promise<CpuReading>} cpu CPU seconds so far of the managers and PostgreSQL
 * @property {() => Promise<void>} stop stops the managers and drops the shared database
 */

/**
 * @typedef {object} CpuReading
 * @property {number} managerUser
 * @property {number} managerSystem
 * @property {number} postgres the embedded server's processes, or the shared server's backends
 *   serving this cluster's database (its background writers are shared with others and left out)
 */

/**
 * One manager on its embedded PostgreSQL, or `count` managers on one fresh database
 * (`scale_<pid>_<n>`) of a shared PostgreSQL server, as issue 16's stateless managers run: the
 * second one gets the first one's master key file. The database is dropped by `stop`.
 *
 * @param {{ count: number, workDir: string, build?: string, cpuProfDir?: string,
 *   log: (m: string) => void }} opts
 * @returns {Promise<ScaleCluster>}
 */
export async function startScaleCluster(opts) {
  const common = {
    ...(opts.build ? { build: opts.build } : {}),
    ...(opts.cpuProfDir ? { cpuProfDir: opts.cpuProfDir } : {}),
    log: opts.log,
  };
  if (opts.count === 1) {
    const m = await startManagerProcess({ home: join(opts.workDir, 'home-0'), ...common });
    return {
      managers: [m],
      adminPassword: m.adminPassword,
      database: 'embedded',
      cpu: async () => ({ ...managerCpu([m]), postgres: groupCpuSeconds(m.databasePids()) }),
      stop: () => m.stop(),
    };
  }
  const server = process.env.MANAGER_SCALE_DATABASE_URL ?? SHARED_SERVER;
  const database = `scale_${process.pid}_${Date.now() % 1e6}`;
  const admin = new pg.Client({ connectionString: `${server}/postgres` });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${database}`);
  /** @type {import('./manager-process.js').ManagerProcess[]} */
  const managers = [];
  const stop = async () => {
    await Promise.all(managers.map((m) => m.stop()));
    await admin.query(`DROP DATABASE IF EXISTS ${database} WITH (FORCE)`).catch(() => undefined);
    await admin.end();
  };
  try {
    const env = { DATABASE_URL: `${server}/${database}` };
    const first = join(opts.workDir, 'home-0');
    // One after the other: the first creates the schema, the admin and the master key.
    for (let i = 0; i < opts.count; i++) {
      const home = join(opts.workDir, `home-${i}`);
      const keyFile = { FREELOADER_MASTER_KEY_FILE: join(first, 'manager', 'master.key') };
      managers.push(
        await startManagerProcess({ home, env: i === 0 ? env : { ...env, ...keyFile }, ...common }),
      );
    }
  } catch (e) {
    await stop();
    throw e;
  }
  return {
    managers,
    adminPassword: /** @type {import('./manager-process.js').ManagerProcess} */ (managers[0])
      .adminPassword,
    database,
    cpu: async () => {
      const { rows } = await admin.query('SELECT pid FROM pg_stat_activity WHERE datname = $1', [
        database,
      ]);
      return { ...managerCpu(managers), postgres: groupCpuSeconds(rows.map((r) => r.pid)) };
    },
    stop,
  };
}

/** @param {import('./manager-process.js').ManagerProcess[]} managers */
function managerCpu(managers) {
  let managerUser = 0;
  let managerSystem = 0;
  for (const m of managers) {
    const t = cpuTimes(m.pid);
    managerUser += t.user;
    managerSystem += t.system;
  }
  return { managerUser, managerSystem };
}
