import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LoginResponse, UserView } from '@freeloader/protocol';
import { ManagerClient } from '../../manager-client.js';
import {
  internalsOf,
  killSpawned,
  runCli,
  startTestManager,
  type TestManager,
} from '../../test/cluster-harness.js';
import { formatShare } from './sharing.js';

describe('formatShare', () => {
  it.each([
    [{ groupId: 'g', group: 'lab', manage: true, from: 'p/x' }, 'lab (manage)'],
    [{ groupId: null, group: null, manage: false, from: 'p/x' }, 'site'],
    [{ groupId: 'g', group: 'lab', manage: false, from: 'p' }, 'lab, from p'],
    [{ groupId: null, group: null, manage: false, from: '' }, 'site, from /'],
  ])('%j → %s', (share, text) => {
    expect(formatShare(share, 'p/x')).toBe(text);
  });
});

describe('freeloader share / unshare / chown / group', () => {
  let tm: TestManager;
  const env: Record<string, NodeJS.ProcessEnv> = {};
  const ids: Record<string, string> = {};

  async function tokenOf(username: string, password: string): Promise<string> {
    const client = new ManagerClient(tm.url);
    try {
      return (await client.request<LoginResponse>('POST', '/auth/login', { username, password }))
        .token;
    } finally {
      await client.close();
    }
  }

  beforeAll(async () => {
    tm = await startTestManager();
    env.admin = { FREELOADER_TOKEN: await tokenOf('admin', tm.adminPassword) };
    for (const name of ['ann', 'bob']) {
      const u = await tm.admin.request<UserView>('POST', '/users', {
        username: name,
        password: `password-${name}`,
      });
      ids[name] = u.id;
      env[name] = { FREELOADER_TOKEN: await tokenOf(name, `password-${name}`) };
    }
    await internalsOf(tm.manager).namespaceRepo.createDataset({
      path: 'proj/a.bin',
      sizeBytes: 1,
      state: 'ready',
      ownerId: ids.ann,
    });
  }, 180_000);
  afterAll(async () => {
    await killSpawned();
    await tm?.close();
  });

  const cli = (who: string, ...args: string[]) => runCli([...args, '--manager', tm.url], env[who]);

  it('a group manager builds a group; others may not change it', async () => {
    const made = await cli('ann', 'group', 'create', 'lab');
    expect(made.code, made.stderr).toBe(0);
    expect(made.stdout).toMatch(/^lab\s+ann \(manager\)$/m);
    const added = await cli('ann', 'group', 'add', 'lab', 'bob');
    expect(added.stdout).toMatch(/^lab\s+ann \(manager\), bob$/m);
    const refused = await cli('bob', 'group', 'remove', 'lab', 'ann');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/only a manager of group lab or an admin/);
    const listed = await cli('bob', 'group', 'ls');
    expect(listed.stdout).toMatch(/^lab\s+ann \(manager\), bob$/m);
  });

  it('share lets the group list and stat what is in a folder; unshare takes it back', async () => {
    // bob sees neither the folder nor what is in it.
    expect((await cli('bob', 'ls')).stdout).not.toContain('proj/');
    expect((await cli('bob', 'ls', 'proj')).stdout).not.toContain('a.bin');
    const bobShares = await cli('bob', 'share', 'proj', '--group', 'lab');
    expect(bobShares.code).toBe(1);
    // Not his to know about yet: answered as a missing path.
    expect(bobShares.stderr).toMatch(/no dataset or folder "proj" \[NOT_FOUND\]/);

    const shared = await cli('ann', 'share', 'proj', '--group', 'lab');
    expect(shared.code, shared.stderr).toBe(0);
    expect(shared.stdout).toMatch(/^shared with\s+lab$/m);
    const ls = await cli('bob', 'ls', 'proj');
    expect(ls.stdout).toContain('a.bin');
    const stat = await cli('bob', 'stat', 'proj/a.bin');
    expect(stat.stdout).toMatch(/^owner\s+ann$/m);
    expect(stat.stdout).toMatch(/^shared with\s+lab, from proj$/m);
    const rm = await cli('bob', 'rm', 'proj/a.bin');
    expect(rm.code).toBe(1);
    expect(rm.stderr).toMatch(/only its owner ann, a manager of a group .* may delete proj\/a.bin/);

    const unshared = await cli('ann', 'unshare', 'proj', '--group', 'lab');
    expect(unshared.stdout).toMatch(/^shared with\s+-$/m);
    expect((await cli('bob', 'stat', 'proj/a.bin')).stderr).toMatch(/NOT_FOUND/);
  });

  it('chown is for admins; the new owner may then manage it', async () => {
    const refused = await cli('ann', 'chown', 'proj/a.bin', 'bob');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/this needs the admin role \[FORBIDDEN\]/);
    const given = await cli('admin', 'chown', 'proj/a.bin', 'bob');
    expect(given.code, given.stderr).toBe(0);
    expect(given.stdout).toMatch(/^owner\s+bob$/m);
    const access = await cli('bob', 'access', 'proj/a.bin');
    expect(access.stdout).toMatch(/^dataset proj\/a.bin$/m);
  });

  it.each([
    [['share', 'proj'], /exactly one of --group GROUP and --site/],
    [['share', 'proj', '--group', 'lab', '--site'], /exactly one of --group GROUP and --site/],
    [['share', 'proj', '--site', '--manage'], /only a group can be given manage rights/],
    [['share', 'proj', '--group', 'nope'], /no group "nope"/],
  ])('%j fails in one line', async (args, message) => {
    const res = await cli('ann', ...args);
    expect(res.code).toBe(1);
    expect(res.stderr.trim()).toMatch(message);
  });
});
