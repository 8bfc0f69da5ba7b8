import { once } from 'node:events';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JoinTokenView, Listing, LoginResponse } from '@freeloader/protocol';
import {
  killSpawned,
  runCli,
  startTestManager,
  type TestManager,
} from '../test/cluster-harness.js';

/** `--help` of each level names its subcommands and options. */
const HELP: [string[], string[]][] = [
  [
    ['--help'],
    ['manager', 'agent', 'cluster', 'login', 'token', 'ls', 'stat', 'get', 'import', '--debug'],
  ],
  [
    ['agent', '--help'],
    ['--manager', '--token', '--dir', '--quota', '--listen', '--advertise', '--bandwidth-only'],
  ],
  [
    ['token', '--help'],
    ['create', 'list', 'revoke'],
  ],
  [
    ['token', 'create', '--help'],
    ['--ttl', '--uses', '--note', '--manager'],
  ],
  [
    ['cluster', '--help'],
    ['--agents', '--quota', '--port', '--agent-base-port', '--home', '--governor'],
  ],
];

describe('freeloader CLI without a manager', () => {
  it.each(HELP)('%j lists its commands and options', async (args, words) => {
    const res = await runCli(args);
    expect(res.code, res.stderr).toBe(0);
    for (const w of words) expect(res.stdout).toContain(w);
  });

  it.each([[['frobnicate']], [['token', 'frobnicate']], [['ls', '--no-such-option']]])(
    '%j exits non-zero with a message',
    async (args) => {
      const res = await runCli(args);
      expect(res.code).not.toBe(0);
      expect(res.stderr).toMatch(/error: (unknown command|unknown option)/);
    },
  );

  it('a command that needs the manager fails in one line when it is unreachable', async () => {
    const res = await runCli(['ls', '--manager', 'http://127.0.0.1:9'], {
      FREELOADER_TOKEN: 'anything',
    });
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toMatch(
      /^error: manager at http:\/\/127\.0\.0\.1:9 is unreachable .*\[UNAVAILABLE\]$/,
    );
  });
});

describe('freeloader manager', () => {
  let home = '';
  afterAll(async () => {
    await killSpawned();
    if (home) await rm(home, { recursive: true, force: true });
  });

  it('exits 1 with one line naming EMBEDDED_PG_PORT when that pinned port is taken', async () => {
    home = await mkdtemp(join(tmpdir(), 'fl-manager-fail-'));
    await chmod(home, 0o711);
    // Hold the database port, so the embedded PostgreSQL cannot listen on it.
    const holder = createServer().listen(0, '127.0.0.1');
    await once(holder, 'listening');
    const pgPort = (holder.address() as AddressInfo).port;
    try {
      const res = await runCli(['manager', '--listen', '127.0.0.1:0', '--home', home], {
        EMBEDDED_PG_PORT: String(pgPort),
        LOG_LEVEL: 'warn',
      });
      expect(res.code, res.stderr).toBe(1);
      expect(res.stderr.trim()).toMatch(
        new RegExp(
          `^error: EMBEDDED_PG_PORT=${pgPort} is already in use on 127\\.0\\.0\\.1 .*unset EMBEDDED_PG_PORT.*\\[UNAVAILABLE\\]$`,
        ),
      );
    } finally {
      holder.close();
    }
  });
});

describe('freeloader CLI against a manager', () => {
  let tm: TestManager;
  let emptyHome: string;
  let sessionToken: string;

  beforeAll(async () => {
    tm = await startTestManager();
    emptyHome = await mkdtemp(join(tmpdir(), 'fl-cli-home-'));
    const login = await tm.admin.request<LoginResponse>('POST', '/auth/login', {
      username: 'admin',
      password: tm.adminPassword,
    });
    sessionToken = login.token;
  }, 180_000);

  afterAll(async () => {
    await killSpawned();
    await tm?.close();
    await rm(emptyHome, { recursive: true, force: true });
  });

  // A session token skips the password login (scrypt is slow on a busy machine).
  const asAdmin = () => ({ FREELOADER_HOME: emptyHome, FREELOADER_TOKEN: sessionToken });

  // The CLI signs in from the admin-password file on the manager's own machine, or a token.
  const signIns: [string, () => NodeJS.ProcessEnv][] = [
    ['the admin password file', () => ({ FREELOADER_HOME: tm.home })],
    ['FREELOADER_TOKEN', () => asAdmin()],
  ];

  it.each(signIns)('token create prints a join token (signed in by %s)', async (_, env) => {
    const before = await tm.admin.request<JoinTokenView[]>('GET', '/tokens');
    const res = await runCli(
      ['token', 'create', '--manager', tm.url, '--uses', '2', '--note', 'cli-test'],
      env(),
    );
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout.trim()).toMatch(/^flj_[\w-]{20,}::sha256:[0-9a-f]{64}$/);
    expect(res.stderr).toContain(
      `freeloader agent --manager ${tm.url} --token ${res.stdout.trim()}`,
    );
    // The agent listens on every interface by default: the command says so explicitly.
    expect(res.stderr).toMatch(/ --listen 0\.0\.0\.0:7401\n/);
    expect(res.stderr).toMatch(/other machines can read them.*to restrict it/);
    const after = await tm.admin.request<JoinTokenView[]>('GET', '/tokens');
    expect(after).toHaveLength(before.length + 1);
    expect(after.find((t) => !before.some((b) => b.id === t.id))).toMatchObject({
      maxUses: 2,
      note: 'cli-test',
      uses: 0,
    });
  });

  it('token list shows the tokens', async () => {
    const res = await runCli(['token', 'list', '--manager', tm.url], asAdmin());
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toMatch(/active\s+0\/2 .*cli-test/);
  });

  it('ls on an empty namespace prints nothing on stdout and (empty) on stderr', async () => {
    const res = await runCli(['ls', '--manager', tm.url], asAdmin());
    expect(res.code, res.stderr).toBe(0);
    expect(res.stdout).toBe('');
    expect(res.stderr.trim()).toBe('(empty)');
    const json = await runCli(['ls', '--json', '--manager', tm.url], asAdmin());
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout) as Listing).toEqual({ path: '', folders: [], datasets: [] });
  });

  it('without a session the CLI says how to sign in', async () => {
    const res = await runCli(['ls', '--manager', tm.url], { FREELOADER_HOME: emptyHome });
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toBe(
      `error: not signed in to ${tm.url}: run \`freeloader login --manager ${tm.url}\` [UNAUTHENTICATED]`,
    );
  });
});
