import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import type { EnrollResponse, Role } from '@freeloader/protocol';
import { buildApp, type BuildOptions } from '../app.js';
import { createUser } from '../bootstrap.js';
import { LOOPBACK_SOURCES } from '@freeloader/sources/testing';
import { loadConfig, type Config } from '../config.js';
import { createTestDatabase, type TestDatabase } from './db.js';
import { TEST_MASTER_KEY_FILE } from './master-key.js';

export interface Harness {
  app: FastifyInstance;
  db: TestDatabase;
  /** Log in a new user with `role`; returns its bearer header. */
  login(role?: Role): Promise<{ authorization: string; userId: string }>;
  /** Mint a join token as an admin and enroll an agent with it. */
  enroll(opts?: { quotaBytes?: number; name?: string }): Promise<EnrollResponse & { auth: string }>;
  /** `app.inject` that parses the JSON body. */
  call(opts: InjectOptions): Promise<LightMyRequestResponse>;
  close(): Promise<void>;
}

let seq = 0;

/**
 * A test manager's config on `databaseUrl`: quiet, no home, the tests' shared master key,
 * loopback sources allowed. A second manager on a harness's database is
 * `buildApp(testConfig(h.db.url), { timers: false })`.
 */
export function testConfig(databaseUrl: string, overrides: Partial<Config> = {}): Config {
  return loadConfig(
    {},
    {
      databaseUrl,
      logLevel: 'silent',
      home: '/nonexistent',
      masterKeyFile: TEST_MASTER_KEY_FILE,
      // The tests' sources are test servers on loopback: allowed here, on purpose.
      sourceAllow: [...LOOPBACK_SOURCES],
      ...overrides,
    },
  );
}

/** An app on its own fresh database, plus helpers for users and agents. */
export async function startHarness(
  overrides: Partial<Config> = {},
  opts: BuildOptions = {},
  adminUrl?: string,
): Promise<Harness> {
  const db = await createTestDatabase(adminUrl);
  const app = await buildApp(testConfig(db.url, overrides), { timers: false, ...opts });
  const call: Harness['call'] = (o) => app.inject(o);

  const login: Harness['login'] = async (role = 'scientist') => {
    const username = `${role}-${++seq}-${process.pid}`;
    const user = await createUser(app, { username, password: 'pw-' + username, role });
    const res = await call({
      method: 'POST',
      url: '/api/v1/auth/login',
      payload: { username, password: 'pw-' + username },
    });
    if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
    return { authorization: `Bearer ${res.json<{ token: string }>().token}`, userId: user.id };
  };

  let adminAuth: string | undefined;
  const enroll: Harness['enroll'] = async (o = {}) => {
    adminAuth ??= (await login('admin')).authorization;
    const token = await call({
      method: 'POST',
      url: '/api/v1/tokens',
      headers: { authorization: adminAuth },
      payload: {},
    });
    const res = await call({
      method: 'POST',
      url: '/api/v1/agents/enroll',
      payload: {
        token: token.json<{ token: string }>().token,
        name: o.name ?? `agent-${++seq}`,
        url: 'http://127.0.0.1:7401',
        quotaBytes: o.quotaBytes ?? 1_000_000,
      },
    });
    if (res.statusCode !== 201) throw new Error(`enroll failed: ${res.body}`);
    const body = res.json<EnrollResponse>();
    return { ...body, auth: `Bearer agent.${body.agentId}.${body.credential}` };
  };

  return {
    app,
    db,
    login,
    enroll,
    call,
    close: async () => {
      await app.close();
      await db.drop();
    },
  };
}
