import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { Type, type Static } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import {
  DEAD_AFTER_MS,
  DEFAULT_MANAGER_PORT,
  DEFAULT_REPLICAS,
  FreeLoaderError,
  HEARTBEAT_INTERVAL_MS,
  REPAIR_DONOR_RATE_BPS,
  REPAIR_SOURCE_RATE_BPS,
  JOB_LEASE_MS,
  JOB_WAIT_MS,
  JOB_RETENTION_MS,
  MAX_REPLICAS,
  STALE_AFTER_MS,
} from '@freeloader/protocol';
import { parseAllowList, SOURCE_ALLOW_ENV } from '@freeloader/sources';

const Port = Type.Integer({ minimum: 0, maximum: 65535 });
const Millis = Type.Integer({ minimum: 1, maximum: 7 * 24 * 3600 * 1000 });

export const LogLevel = Type.Union(
  ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)),
);

/** The manager's validated configuration (camelCase; each field has one env variable). */
export const ConfigSchema = Type.Object({
  home: Type.String({ minLength: 1 }),
  databaseUrl: Type.Optional(Type.String({ pattern: '^postgres(ql)?://' })),
  host: Type.String({ minLength: 1 }),
  port: Port,
  /**
   * Port of the embedded PostgreSQL when the user pinned one; unset, the manager uses 7432 or the
   * port it remembered in its home, and picks a free one when that is taken.
   */
  embeddedPgPort: Type.Optional(Port),
  staleAfterMs: Millis,
  deadAfterMs: Millis,
  heartbeatIntervalMs: Millis,
  /** How often soft state is written to `agents.last_seen_at` (milliseconds). */
  softStateFlushMs: Millis,
  /**
   * Silence after which an offline donor is lost and repair starts (milliseconds). Unset: sized
   * from observed outages (see placement/repair-after.ts), REPAIR_AFTER_FALLBACK_MS until enough
   * were seen.
   */
  repairAfterMs: Type.Optional(Millis),
  /** Per-donor repair bandwidth cap b (bytes/s). */
  repairDonorRateBps: Type.Integer({ minimum: 1024 }),
  /** Cap B on repair reads from sources (bytes/s). */
  repairSourceRateBps: Type.Integer({ minimum: 1024 }),
  /** How often the repair scheduler looks for work (milliseconds). */
  repairTickMs: Millis,
  /** How long a claimed job stays its agent's without a heartbeat or report (milliseconds). */
  jobLeaseMs: Millis,
  /**
   * How long an agent's job channel wait is held before it answers "nothing new" (milliseconds;
   * JOB_WAIT_MS; tests shorten it to provoke many wait turnovers).
   */
  jobWaitMs: Millis,
  /** How long finished jobs are kept before the periodic sweep deletes them (milliseconds). */
  jobRetentionMs: Type.Integer({ minimum: 1, maximum: 3650 * 24 * 3600 * 1000 }),
  logLevel: LogLevel,
  allowFileUris: Type.Boolean(),
  /**
   * Hosts and CIDRs sources may reach although they are loopback, private, link-local … (the
   * manager's probes, and the agents, who receive it with every heartbeat). The admin's setting
   * (`PUT /api/v1/settings/sources`) adds to it.
   */
  sourceAllow: Type.Array(Type.String({ minLength: 1 })),
  consoleDir: Type.Optional(Type.String({ minLength: 1 })),
  /**
   * HTTPS for the API and console: `auto` (default) serves HTTPS when listening beyond loopback
   * and plain HTTP on loopback only; `on` forces HTTPS (also on loopback); `off` never.
   */
  tls: Type.Union([Type.Literal('auto'), Type.Literal('on'), Type.Literal('off')]),
  /** The admin's own certificate (PEM, may hold the chain) and key, instead of the generated CA. */
  tlsCert: Type.Optional(Type.String({ minLength: 1 })),
  tlsKey: Type.Optional(Type.String({ minLength: 1 })),
  /** The CA that issued `tlsCert` (PEM); unset, the last certificate in `tlsCert`. */
  tlsCa: Type.Optional(Type.String({ minLength: 1 })),
  /** More names (DNS aliases, addresses) the generated certificate carries. */
  tlsNames: Type.Array(Type.String({ minLength: 1 })),
  /**
   * The file holding the master key that wraps every dataset key (0600); unset,
   * `$FREELOADER_HOME/manager/master.key`, created at first start. Never in the database, so a
   * dump alone opens nothing; every manager of one database needs a copy of the same file.
   */
  masterKeyFile: Type.Optional(Type.String({ minLength: 1 })),
  /** Copies of each morsel for an import that names neither `replicas` nor `availability`. */
  replicasDefault: Type.Integer({ minimum: 1, maximum: MAX_REPLICAS }),
});
export type Config = Static<typeof ConfigSchema>;

/** Env variable behind each config field, for error messages that name what the user set. */
const ENV_KEYS: Record<keyof Config, string> = {
  home: 'FREELOADER_HOME',
  databaseUrl: 'DATABASE_URL',
  host: 'MANAGER_HOST',
  port: 'MANAGER_PORT',
  embeddedPgPort: 'EMBEDDED_PG_PORT',
  staleAfterMs: 'STALE_AFTER_MS',
  deadAfterMs: 'DEAD_AFTER_MS',
  heartbeatIntervalMs: 'HEARTBEAT_INTERVAL_MS',
  softStateFlushMs: 'SOFT_STATE_FLUSH_MS',
  repairAfterMs: 'REPAIR_AFTER_MS',
  repairDonorRateBps: 'REPAIR_DONOR_RATE',
  repairSourceRateBps: 'REPAIR_SOURCE_RATE',
  repairTickMs: 'REPAIR_TICK_MS',
  jobLeaseMs: 'JOB_LEASE_MS',
  jobWaitMs: 'JOB_WAIT_MS',
  jobRetentionMs: 'JOB_RETENTION_MS',
  logLevel: 'LOG_LEVEL',
  allowFileUris: 'FREELOADER_ALLOW_FILE_URIS',
  sourceAllow: SOURCE_ALLOW_ENV,
  consoleDir: 'CONSOLE_DIR',
  tls: 'MANAGER_TLS',
  tlsCert: 'MANAGER_TLS_CERT',
  tlsKey: 'MANAGER_TLS_KEY',
  tlsCa: 'MANAGER_TLS_CA',
  tlsNames: 'MANAGER_TLS_NAMES',
  masterKeyFile: 'FREELOADER_MASTER_KEY_FILE',
  replicasDefault: 'REPLICAS_DEFAULT',
};

const DEFAULTS = {
  host: '127.0.0.1',
  port: DEFAULT_MANAGER_PORT,
  staleAfterMs: STALE_AFTER_MS,
  deadAfterMs: DEAD_AFTER_MS,
  heartbeatIntervalMs: HEARTBEAT_INTERVAL_MS,
  softStateFlushMs: 1_000,
  repairDonorRateBps: REPAIR_DONOR_RATE_BPS,
  repairSourceRateBps: REPAIR_SOURCE_RATE_BPS,
  repairTickMs: 5_000,
  jobLeaseMs: JOB_LEASE_MS,
  jobWaitMs: JOB_WAIT_MS,
  jobRetentionMs: JOB_RETENTION_MS,
  logLevel: 'info',
  allowFileUris: false,
  replicasDefault: DEFAULT_REPLICAS,
  sourceAllow: [],
  tls: 'auto',
  tlsNames: [],
} satisfies Partial<Config>;

/** Numbers and booleans arrive as text; anything unparsable is kept as text so the check names it. */
function num(text: string | undefined): number | string | undefined {
  if (text === undefined || text === '') return undefined;
  return /^-?\d+$/.test(text.trim()) ? Number(text) : text;
}

function bool(text: string | undefined): boolean | string | undefined {
  if (text === undefined || text === '') return undefined;
  const t = text.trim().toLowerCase();
  if (['1', 'true', 'yes', 'on'].includes(t)) return true;
  if (['0', 'false', 'no', 'off'].includes(t)) return false;
  return text;
}

function str(text: string | undefined): string | undefined {
  return text === undefined || text === '' ? undefined : text;
}

function fromEnv(env: NodeJS.ProcessEnv): Record<string, unknown> {
  const raw: Record<keyof Config, unknown> = {
    home: str(env.FREELOADER_HOME),
    databaseUrl: str(env.DATABASE_URL),
    host: str(env.MANAGER_HOST),
    port: num(env.MANAGER_PORT),
    embeddedPgPort: num(env.EMBEDDED_PG_PORT),
    staleAfterMs: num(env.STALE_AFTER_MS),
    deadAfterMs: num(env.DEAD_AFTER_MS),
    heartbeatIntervalMs: num(env.HEARTBEAT_INTERVAL_MS),
    softStateFlushMs: num(env.SOFT_STATE_FLUSH_MS),
    repairAfterMs: num(env.REPAIR_AFTER_MS),
    repairDonorRateBps: num(env.REPAIR_DONOR_RATE),
    repairSourceRateBps: num(env.REPAIR_SOURCE_RATE),
    repairTickMs: num(env.REPAIR_TICK_MS),
    jobLeaseMs: num(env.JOB_LEASE_MS),
    jobWaitMs: num(env.JOB_WAIT_MS),
    jobRetentionMs: num(env.JOB_RETENTION_MS),
    logLevel: str(env.LOG_LEVEL)?.toLowerCase(),
    allowFileUris: bool(env.FREELOADER_ALLOW_FILE_URIS),
    sourceAllow: str(env[SOURCE_ALLOW_ENV])?.split(','),
    consoleDir: str(env.CONSOLE_DIR),
    tls: str(env.MANAGER_TLS)?.toLowerCase(),
    tlsCert: str(env.MANAGER_TLS_CERT),
    tlsKey: str(env.MANAGER_TLS_KEY),
    tlsCa: str(env.MANAGER_TLS_CA),
    tlsNames: str(env.MANAGER_TLS_NAMES)
      ?.split(',')
      .map((n) => n.trim())
      .filter((n) => n !== ''),
    masterKeyFile: str(env.FREELOADER_MASTER_KEY_FILE),
    replicasDefault: num(env.REPLICAS_DEFAULT),
  };
  return Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined));
}

/**
 * Read the manager's configuration from the environment, apply `overrides` (tests, embedding
 * callers) and validate the result. Throws VALIDATION_FAILED naming every bad variable.
 *
 * @example
 *   loadConfig(process.env)                          // production
 *   loadConfig({}, { port: 0, logLevel: 'silent' })  // a test
 */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<Config> = {},
): Config {
  const definedOverrides = Object.fromEntries(
    Object.entries(overrides).filter(([, v]) => v !== undefined),
  );
  const candidate: Record<string, unknown> = {
    ...DEFAULTS,
    home: join(homedir(), '.freeloader'),
    ...fromEnv(env),
    ...definedOverrides,
  };
  const problems = [...Value.Errors(ConfigSchema, candidate)].map(
    (e) => `${ENV_KEYS[e.path.slice(1) as keyof Config] ?? e.path}: ${e.message}`,
  );
  const config = candidate as Config;
  if (problems.length === 0) {
    try {
      config.sourceAllow = parseAllowList(config.sourceAllow);
    } catch (e) {
      problems.push(`${SOURCE_ALLOW_ENV}: ${(e as Error).message}`);
    }
  }
  if (problems.length === 0 && (config.tlsCert === undefined) !== (config.tlsKey === undefined)) {
    problems.push(
      `${config.tlsCert ? 'MANAGER_TLS_KEY' : 'MANAGER_TLS_CERT'}: is required with the other`,
    );
  }
  if (problems.length === 0 && config.deadAfterMs <= config.staleAfterMs) {
    problems.push('DEAD_AFTER_MS: must be greater than STALE_AFTER_MS');
  }
  if (problems.length > 0) {
    const keys = [...new Set(problems.map((p) => p.split(':')[0]!))];
    throw new FreeLoaderError(
      'VALIDATION_FAILED',
      `invalid manager configuration: ${[...new Set(problems)].join('; ')}`,
      { keys },
    );
  }
  return { ...config, home: resolve(config.home) };
}
