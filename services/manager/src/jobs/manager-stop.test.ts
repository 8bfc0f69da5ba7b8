import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnrollResponse } from '@freeloader/protocol';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { TEST_MASTER_KEY_FILE } from '../test/master-key.js';
import { parsePrometheusText } from '../testing/prometheus-text.js';

// A manager process holding a few hundred job channels stops in seconds: the held waits are
// answered 503 UNAVAILABLE (agents go to another manager) and no kept-alive connection holds the
// stop. Before, a manager serving 10,000 agents took more than 60 s to stop.

/** Agents enrolled; each holds WAITS_PER_AGENT waits (a manager allows several per agent). */
const AGENTS = 20;
const WAITS_PER_AGENT = 15;
const WAITS = AGENTS * WAITS_PER_AGENT;
/**
 * How long the manager holds a wait (ms): far beyond this test's timeout (60 s, which is also
 * below the manager's 72 s keep-alive timeout), so a stop that waited for the waits to run out or
 * for idle connections to time out fails the test instead of passing on a lucky window.
 */
const HOLD_MS = 600_000;

const READY = 'READY ';
let db: TestDatabase;
let home: string;
let child: ChildProcess;
let url: string;
let runCursor: string;
let agents: Array<{ auth: string }>;

/** A wait's outcome: its status and body, or the error that ended it. */
type WaitOutcome = { status: number; retryAfter: string | null; body: string } | { error: string };

beforeAll(async () => {
  const dist = fileURLToPath(new URL('../../dist/start.js', import.meta.url));
  expect(existsSync(dist), 'run `npm run build` first: the child runs the built manager').toBe(
    true,
  );
  db = await createTestDatabase();
  home = await mkdtemp(join(tmpdir(), 'fl-manager-stop-'));
  // The manager as `freeloader manager` runs it, plus the run's first cursor on its ready line
  // (a wait carrying it is held by the job channel's fast path, one with `check` by the route).
  const script = `
    import { startManager } from ${JSON.stringify(pathToFileURL(dist).href)};
    const m = await startManager({
      databaseUrl: process.env.URL, home: process.env.HOME_DIR, port: 0, logLevel: 'warn',
      masterKeyFile: process.env.KEY_FILE, jobWaitMs: ${HOLD_MS},
    });
    console.log(${JSON.stringify(READY)} + JSON.stringify({
      url: m.url, adminPassword: m.adminPassword, cursor: m.app.jobWaiters.cursor,
    }));
    process.once('SIGTERM', () => m.close().then(() => process.exit(0), (e) => {
      console.error(e);
      process.exit(1);
    }));
  `;
  child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('../..', import.meta.url)),
    env: { ...process.env, URL: db.url, HOME_DIR: home, KEY_FILE: TEST_MASTER_KEY_FILE },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = await new Promise<{ url: string; adminPassword: string; cursor: string }>(
    (resolve, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const line = out.split('\n').find((l) => l.startsWith(READY));
        if (line) resolve(JSON.parse(line.slice(READY.length)));
      });
      child.once('exit', (code) => reject(new Error(`manager exited ${code} before ready`)));
    },
  );
  url = ready.url;
  runCursor = ready.cursor;
  const login = await post('/auth/login', { username: 'admin', password: ready.adminPassword });
  const admin = `Bearer ${(login as { token: string }).token}`;
  const { token } = (await post('/tokens', { maxUses: AGENTS }, admin)) as { token: string };
  agents = [];
  for (let i = 0; i < AGENTS; i++) {
    const e = (await post('/agents/enroll', {
      token,
      name: `held-${i}`,
      url: `http://10.0.0.${i + 1}:7400`,
      quotaBytes: 1_000_000,
    })) as EnrollResponse;
    agents.push({ auth: `Bearer agent.${e.agentId}.${e.credential}` });
  }
}, 120_000);

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await db?.drop();
  if (home) await rm(home, { recursive: true, force: true });
});

async function post(path: string, body: unknown, auth?: string): Promise<unknown> {
  const res = await fetch(`${url}/api/v1${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(auth ? { authorization: auth } : {}) },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** A job channel wait, held until the manager answers it (or the connection breaks). */
async function wait(auth: string, query: string): Promise<WaitOutcome> {
  try {
    const res = await fetch(`${url}/api/v1/jobs/wait?${query}`, {
      headers: { authorization: auth },
    });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: await res.text(),
    };
  } catch (e) {
    return { error: String((e as { cause?: unknown }).cause ?? e) };
  }
}

/** Job channel waits the manager holds now, from its /metrics. */
async function openChannels(): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const family = parsePrometheusText(text).find((f) => f.name === 'freeloader_job_channels_open');
  return Number(family?.metrics[0]?.value ?? 0);
}

describe('a manager stopping with held job channels', () => {
  it('answers every held wait 503 UNAVAILABLE and exits without waiting for the holds', async () => {
    // Half the waits through the fast path (this run's cursor), half through the route (check).
    const outcomes = agents.flatMap((a) =>
      Array.from({ length: WAITS_PER_AGENT }, (_, k) =>
        wait(a.auth, k % 2 === 0 ? `cursor=${runCursor}` : 'check=true'),
      ),
    );
    // Idle kept-alive connections too: a heartbeat each, whose connection then sits idle.
    for (const a of agents) {
      await post(
        '/agents/heartbeat',
        { quotaBytes: 1_000_000, usedBytes: 0, freeBytes: 1, servingRate: 0 },
        a.auth,
      );
    }
    for (;;) {
      if ((await openChannels()) >= WAITS) break;
      await new Promise((r) => setTimeout(r, 100));
    }

    const exit = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
    child.kill('SIGTERM');
    // The stop must finish long before the waits' hold (HOLD_MS) or a keep-alive timeout (72 s)
    // could end them: this test's 60 s timeout is below both.
    expect(await exit).toBe(0);

    const answers = await Promise.all(outcomes);
    const unavailable = answers.filter(
      (o) =>
        'status' in o &&
        o.status === 503 &&
        o.retryAfter !== null &&
        (JSON.parse(o.body) as { error: { code: string } }).error.code === 'UNAVAILABLE',
    );
    expect(unavailable.length, JSON.stringify(answers.find((o) => !unavailable.includes(o)))).toBe(
      WAITS,
    );
  });
});
