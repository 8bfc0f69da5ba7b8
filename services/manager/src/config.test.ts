import { homedir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MANAGER_PORT, FreeLoaderError, STALE_AFTER_MS } from '@freeloader/protocol';
import { loadConfig } from './config.js';

function failure(fn: () => unknown): FreeLoaderError {
  try {
    fn();
  } catch (e) {
    return e as FreeLoaderError;
  }
  throw new Error('expected loadConfig to throw');
}

describe('loadConfig', () => {
  it('applies defaults to an empty environment', () => {
    const c = loadConfig({});
    expect(c).toMatchObject({
      home: join(homedir(), '.freeloader'),
      host: '127.0.0.1',
      port: DEFAULT_MANAGER_PORT,
      staleAfterMs: STALE_AFTER_MS,
      logLevel: 'info',
      allowFileUris: false,
      sourceAllow: [],
    });
    expect(c.databaseUrl).toBeUndefined();
    // Not pinned: the manager picks 7432 or a free port when it starts (db/embedded-port.ts).
    expect(c.embeddedPgPort).toBeUndefined();
    expect(c.consoleDir).toBeUndefined();
  });

  it('reads every variable', () => {
    const c = loadConfig({
      FREELOADER_HOME: '/srv/fl',
      DATABASE_URL: 'postgres://u@db:5432/fl',
      MANAGER_HOST: '0.0.0.0',
      MANAGER_PORT: '8000',
      EMBEDDED_PG_PORT: '9432',
      STALE_AFTER_MS: '100',
      DEAD_AFTER_MS: '200',
      HEARTBEAT_INTERVAL_MS: '50',
      JOB_LEASE_MS: '30000',
      JOB_WAIT_MS: '20000',
      JOB_RETENTION_MS: '86400000',
      LOG_LEVEL: 'DEBUG',
      FREELOADER_ALLOW_FILE_URIS: 'true',
      FREELOADER_SOURCE_ALLOW: 'data.lab, 10.0.0.0/8',
      CONSOLE_DIR: '/srv/console',
      MANAGER_TLS: 'off',
      MANAGER_TLS_NAMES: 'cache.lab',
      REPLICAS_DEFAULT: '3',
    });
    expect(c).toEqual({
      home: '/srv/fl',
      databaseUrl: 'postgres://u@db:5432/fl',
      host: '0.0.0.0',
      port: 8000,
      embeddedPgPort: 9432,
      staleAfterMs: 100,
      deadAfterMs: 200,
      heartbeatIntervalMs: 50,
      softStateFlushMs: 1000,
      repairDonorRateBps: 8 * 1024 * 1024,
      repairSourceRateBps: 16 * 1024 * 1024,
      repairTickMs: 5000,
      jobLeaseMs: 30_000,
      jobWaitMs: 20_000,
      jobRetentionMs: 86_400_000,
      logLevel: 'debug',
      allowFileUris: true,
      sourceAllow: ['data.lab', '10.0.0.0/8'],
      consoleDir: '/srv/console',
      tls: 'off',
      tlsNames: ['cache.lab'],
      replicasDefault: 3,
    });
  });

  it('keeps two copies of each morsel unless REPLICAS_DEFAULT says otherwise', () => {
    expect(loadConfig({}).replicasDefault).toBe(2);
    expect(loadConfig({ REPLICAS_DEFAULT: '3' }).replicasDefault).toBe(3);
  });

  it('lets overrides win over the environment', () => {
    const c = loadConfig({ MANAGER_PORT: '8000' }, { port: 0, logLevel: 'silent' });
    expect(c.port).toBe(0);
    expect(c.logLevel).toBe('silent');
  });

  it.each([
    [{ MANAGER_PORT: 'http' }, 'MANAGER_PORT'],
    [{ MANAGER_PORT: '70000' }, 'MANAGER_PORT'],
    [{ EMBEDDED_PG_PORT: '-1' }, 'EMBEDDED_PG_PORT'],
    [{ STALE_AFTER_MS: '1.5' }, 'STALE_AFTER_MS'],
    [{ HEARTBEAT_INTERVAL_MS: '0' }, 'HEARTBEAT_INTERVAL_MS'],
    [{ LOG_LEVEL: 'loud' }, 'LOG_LEVEL'],
    [{ FREELOADER_ALLOW_FILE_URIS: 'maybe' }, 'FREELOADER_ALLOW_FILE_URIS'],
    [{ DATABASE_URL: 'mysql://x' }, 'DATABASE_URL'],
    [{ FREELOADER_SOURCE_ALLOW: '10.0.0.0/33' }, 'FREELOADER_SOURCE_ALLOW'],
    [{ STALE_AFTER_MS: '5000', DEAD_AFTER_MS: '5000' }, 'DEAD_AFTER_MS'],
    [{ REPLICAS_DEFAULT: '0' }, 'REPLICAS_DEFAULT'],
    [{ REPLICAS_DEFAULT: '17' }, 'REPLICAS_DEFAULT'],
    [{ REPLICAS_DEFAULT: 'two' }, 'REPLICAS_DEFAULT'],
    [{ MANAGER_TLS: 'maybe' }, 'MANAGER_TLS'],
    [{ MANAGER_TLS_CERT: '/etc/fl/cert.pem' }, 'MANAGER_TLS_KEY'],
    [{ MANAGER_TLS_KEY: '/etc/fl/key.pem' }, 'MANAGER_TLS_CERT'],
  ])('rejects %o naming %s', (env, key) => {
    const err = failure(() => loadConfig(env));
    expect(err).toBeInstanceOf(FreeLoaderError);
    expect(err.code).toBe('VALIDATION_FAILED');
    expect(err.message).toContain(key);
    expect(err.details?.keys).toEqual([key]);
  });

  it('reads the TLS settings: auto by default, names split on commas', () => {
    expect(loadConfig({})).toMatchObject({ tls: 'auto', tlsNames: [] });
    expect(
      loadConfig({
        MANAGER_TLS: 'ON',
        MANAGER_TLS_CERT: '/c.pem',
        MANAGER_TLS_KEY: '/k.pem',
        MANAGER_TLS_CA: '/ca.pem',
        MANAGER_TLS_NAMES: 'cache.lab, 10.0.0.5,',
      }),
    ).toMatchObject({
      tls: 'on',
      tlsCert: '/c.pem',
      tlsKey: '/k.pem',
      tlsCa: '/ca.pem',
      tlsNames: ['cache.lab', '10.0.0.5'],
    });
  });

  it('lists every bad key at once', () => {
    const err = failure(() => loadConfig({ MANAGER_PORT: 'x', LOG_LEVEL: 'loud' }));
    expect(err.details?.keys).toEqual(expect.arrayContaining(['MANAGER_PORT', 'LOG_LEVEL']));
  });
});
