import type { ChildProcess } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createScratchDatabase,
  startEmbeddedPostgres,
  type EmbeddedPostgresHandle,
  type ScratchDatabase,
} from '@freeloader/manager/testing';
import {
  MiB,
  type DatasetView,
  type ImportResponse,
  type JoinTokenCreated,
  type LoginResponse,
} from '@freeloader/protocol';
import { LOOPBACK_SOURCES, startTestServer, type TestServer } from '@freeloader/sources/testing';
import { getDataset } from '../client/get-dataset.js';
import { ManagerClient } from '../manager-client.js';
import {
  freePort,
  spawnAgent,
  waitFor,
  TEST_TIMINGS,
  type SpawnedAgent,
} from '../test/cluster-harness.js';
import { exited, isRunning, spawnCli } from '../test/processes.js';
import { sha256Hex } from '../test/data-cluster.js';
import { repairKitOver, type RepairKit } from '../test/repair-kit.js';
import { Writable } from 'node:stream';
import { createHash } from 'node:crypto';

// A manager process killed with SIGKILL mid-repair (issue 15): a new one on the same database
// takes the repair scheduler's lock and carries on; every morsel ends with its copies, none
// twice. The manager runs as a real `freeloader manager` process on a PostgreSQL of this test's
// own (embedded, in a temp dir), which outlives the killed manager.
let server: EmbeddedPostgresHandle | undefined;
let db: ScratchDatabase;
let home: string;
let port: number;
let manager: ChildProcess | undefined;
let admin: ManagerClient | undefined;
const agents: SpawnedAgent[] = [];
let src: TestServer | undefined;
let k: RepairKit;

async function startManagerProcess(): Promise<void> {
  const child = spawnCli(
    ['manager', '--listen', `127.0.0.1:${port}`, '--home', home, '--database-url', db.url],
    {
      STALE_AFTER_MS: String(TEST_TIMINGS.staleAfterMs),
      DEAD_AFTER_MS: String(TEST_TIMINGS.deadAfterMs),
      HEARTBEAT_INTERVAL_MS: String(TEST_TIMINGS.heartbeatIntervalMs),
      REPAIR_DONOR_RATE: String(2 * MiB),
      REPAIR_AFTER_MS: '60000',
      REPAIR_TICK_MS: '300',
      // The test's source is on loopback, which the default source policy forbids.
      FREELOADER_SOURCE_ALLOW: LOOPBACK_SOURCES.join(','),
      LOG_LEVEL: 'warn',
    },
  );
  let stderr = '';
  child.stderr!.on('data', (b: Buffer) => (stderr += b.toString()));
  child.stdout!.resume();
  manager = child;
  await waitFor(
    'the manager to listen',
    () => (/^manager: http/m.test(stderr) ? true : undefined),
    90_000,
    50,
  );
  await admin?.close();
  admin = new ManagerClient(`http://127.0.0.1:${port}`);
  const password = (await readFile(join(home, 'manager', 'admin-password'), 'utf8')).trim();
  const session = await admin.request<LoginResponse>('POST', '/auth/login', {
    username: 'admin',
    password,
  });
  admin.setCredentials({ kind: 'user', token: session.token });
}

beforeAll(async () => {
  home = await mkdtemp(join(tmpdir(), 'fl-repair-crash-'));
  // The server may run as the `postgres` user, which must be able to reach its data dir.
  await chmod(home, 0o711);
  server = await startEmbeddedPostgres({
    dataDir: join(home, 'pg', 'pgdata'),
    port: await freePort(),
    ownedRoot: home,
  });
  db = await createScratchDatabase(server.url);
  port = await freePort();
  await startManagerProcess();
  k = repairKitOver({ admin: () => admin!, query: (sql, params) => db.query(sql, params) });
  const { token } = await admin!.request<JoinTokenCreated>('POST', '/tokens', { maxUses: 3 });
  for (let i = 0; i < 3; i++) {
    agents.push(
      await spawnAgent({
        managerUrl: `http://127.0.0.1:${port}`,
        token,
        dir: join(home, `agent-${i}`),
        quota: '64MiB',
        name: `donor-${i}`,
      }),
    );
  }
  await Promise.all(agents.map((a) => k.waitForClass(a.agentId, 'online')));
}, 240_000);

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop('SIGKILL')));
  if (manager && isRunning(manager)) manager.kill('SIGKILL');
  await admin?.close();
  await src?.close();
  await db?.drop();
  await server?.stop();
  await rm(home, { recursive: true, force: true });
});

describe('a manager killed with SIGKILL mid-repair', () => {
  it('is replaced by one that resumes the repair on the same database', async () => {
    // 36 MiB: each of the three repair jobs (one per destination) moves 12 MiB at b = 2 MiB/s
    // and commits at 8 MiB (the agent's commit batch), so a first commit comes 2 s before the
    // job's last. With 12 MiB every job committed once, at its end, all within 0.1 s of each
    // other: the test passed only while some jobs were claimed 25 s late (a lost wake-up).
    src = await startTestServer({ size: 36 * MiB, seed: 61 });
    const res = await admin!.request<ImportResponse>('POST', '/datasets', {
      uri: src.url,
      name: 'crash/a.bin',
      width: 3,
      // One copy now, two wanted below: the second copy is made by repair (imports place
      // REPLICAS_DEFAULT copies themselves otherwise, leaving repair nothing to do).
      replicas: 1,
    });
    const id = res.dataset!.id;
    await waitFor(
      'the import',
      async () =>
        (await admin!.request<DatasetView>('GET', `/datasets/${id}`)).state === 'ready' ||
        undefined,
      120_000,
      200,
    );
    await k.setReplicas(id, 2);
    await waitFor(
      'a first unit to be committed',
      async () =>
        (await db.query('SELECT 1 FROM repair_done WHERE dataset_id = $1', [id])).length > 0 ||
        undefined,
      120_000,
      100,
    );
    expect(
      (await db.query('SELECT 1 FROM repair_units WHERE dataset_id = $1', [id])).length,
    ).toBeGreaterThan(0);
    manager!.kill('SIGKILL');
    await exited(manager!);
    await startManagerProcess();
    await k.waitForCopies(id, 2, [], 240_000);
    expect(await db.query('SELECT 1 FROM repair_units WHERE dataset_id = $1', [id])).toEqual([]);
    await src.close();
    const hash = createHash('sha256');
    await getDataset({
      manager: admin!,
      dataset: id,
      sink: new Writable({
        write(chunk: Buffer, _enc, cb) {
          hash.update(chunk);
          cb();
        },
      }),
    });
    expect(hash.digest('hex')).toBe(sha256Hex(src.content));
  }, 400_000);
});
