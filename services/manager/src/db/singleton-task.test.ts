import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../test/db.js';
import { LockSession, runAsSingleton, type SingletonTask } from './singleton-task.js';

// Managers contending for one periodic task on a real PostgreSQL: two in this process, then a
// holder in a child process that is killed with SIGKILL.
const KEY = 0x464c5454; // 'FLTT': this test's own lock
const PERIOD_MS = 200;
const log = { warn: () => undefined };

let db: TestDatabase;
const sessions: LockSession[] = [];
const tasks: SingletonTask[] = [];
const children: ChildProcess[] = [];
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => {
  for (const c of children) c.kill('SIGKILL');
  await Promise.all(tasks.map((t) => t.stop()));
  await Promise.all(sessions.map((s) => s.close()));
  await db?.drop();
});

function session(): LockSession {
  const s = new LockSession(db.url);
  sessions.push(s);
  return s;
}

async function waitFor<T>(
  what: string,
  probe: () => T | undefined,
  timeoutMs = 60_000,
): Promise<T> {
  const until = performance.now() + timeoutMs;
  for (;;) {
    const v = probe();
    if (v !== undefined && v !== false) return v;
    if (performance.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('runAsSingleton', () => {
  it('runs on one holder only; the other takes over when the holder stops', async () => {
    const a = runAsSingleton(session(), KEY, async () => undefined, PERIOD_MS, { name: 'a', log });
    const b = runAsSingleton(session(), KEY, async () => undefined, PERIOD_MS, { name: 'b', log });
    tasks.push(a, b);
    await waitFor('ten runs', () => a.runs + b.runs >= 10 || undefined);
    expect(Math.min(a.runs, b.runs)).toBe(0);
    const [holder, other] = a.runs > 0 ? [a, b] : [b, a];
    await holder.stop();
    await waitFor('the other to take over', () => other.runs > 0 || undefined);
    await other.stop();
  });

  it('is taken over within about a period after the holder is killed with SIGKILL', async () => {
    const dist = fileURLToPath(new URL('../../dist/db/singleton-task.js', import.meta.url));
    expect(existsSync(dist), 'run `npm run build` first: the child runs the built module').toBe(
      true,
    );
    await db.query('CREATE TABLE IF NOT EXISTS ticks (at timestamptz NOT NULL DEFAULT now())');
    // The child holds the lock and records each tick, as a manager would.
    const script = `
      import pg from 'pg';
      import { LockSession, runAsSingleton } from ${JSON.stringify(pathToFileURL(dist).href)};
      const pool = new pg.Pool({ connectionString: process.env.URL, max: 1 });
      runAsSingleton(new LockSession(process.env.URL), ${KEY}, async () => {
        await pool.query('INSERT INTO ticks DEFAULT VALUES');
      }, ${PERIOD_MS}, { name: 'child', log: console });
      setInterval(() => undefined, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: fileURLToPath(new URL('../..', import.meta.url)),
      env: { ...process.env, URL: db.url },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    children.push(child);
    const ticked = async () =>
      (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM ticks'))[0]!.n;
    const until = performance.now() + 60_000;
    while ((await ticked()) < 3) {
      if (performance.now() > until) throw new Error('the child never ran its task');
      await new Promise((r) => setTimeout(r, 50));
    }

    const survivor = runAsSingleton(session(), KEY, async () => undefined, PERIOD_MS, {
      name: 'survivor',
      log,
    });
    tasks.push(survivor);
    // While the child lives, the survivor never runs.
    await new Promise((r) => setTimeout(r, 5 * PERIOD_MS));
    expect(survivor.runs).toBe(0);

    const killedAt = performance.now();
    child.kill('SIGKILL');
    await waitFor('the survivor to take over', () => survivor.runs > 0 || undefined);
    const takeoverMs = performance.now() - killedAt;
    console.log(
      `advisory-lock takeover after SIGKILL: ${Math.round(takeoverMs)} ms (period ${PERIOD_MS} ms)`,
    );
    // One period plus the server noticing the closed socket; generous for a busy machine.
    expect(takeoverMs).toBeLessThan(PERIOD_MS + 15_000);
  });
});
