import type { Command } from 'commander';
import {
  FreeLoaderError,
  type AccessView,
  type GroupView,
  type ShareView,
} from '@freeloader/protocol';
import { defaultManagerUrl } from '../paths.js';
import { userClient } from '../session.js';

/**
 * One line per audience: `lab (manage)`, `site`, `lab, from climate` when inherited.
 *
 * @example formatShare({ groupId: 'g', group: 'lab', manage: true, from: 'a/b' }, 'a/b') // 'lab (manage)'
 */
export function formatShare(s: ShareView, path: string): string {
  const who = s.group ?? 'site';
  const manage = s.manage ? ' (manage)' : '';
  const from = s.from === path ? '' : `, from ${s.from || '/'}`;
  return `${who}${manage}${from}`;
}

/** `owner  ann` and `shared lab (manage); site, from climate` (or `-`). */
export function formatAccess(a: Pick<AccessView, 'owner' | 'sharing'>, path: string): string[] {
  const shares = (a.sharing ?? []).map((s) => formatShare(s, path));
  return [
    `${'owner'.padEnd(14)} ${a.owner ?? '(admins)'}`,
    `${'shared with'.padEnd(14)} ${shares.length ? shares.join('; ') : '-'}`,
  ];
}

const trim = (path: string) => path.replace(/^\/+|\/+$/g, '');

/** The audience flags: exactly one of --group G and --site. */
function audience(opts: { group?: string; site?: boolean }): string | undefined {
  if ((opts.group === undefined) === !opts.site) {
    throw new FreeLoaderError('VALIDATION_FAILED', 'give exactly one of --group GROUP and --site');
  }
  return opts.group;
}

async function withClient<T>(
  manager: string,
  fn: (c: Awaited<ReturnType<typeof userClient>>) => Promise<T>,
) {
  const client = await userClient(manager);
  try {
    return await fn(client);
  } finally {
    await client.close();
  }
}

function printAccess(a: AccessView): void {
  console.log(`${a.kind} ${a.path || '/'}`);
  for (const line of formatAccess(a, a.path)) console.log(line);
}

/**
 * chmod-like commands (issue 17 item 2): `share`, `unshare`, `chown` (admins), `access`, and
 * `group create|add|remove|rm|ls`.
 */
export function registerSharing(program: Command): void {
  const managerOpt = ['--manager <url>', 'manager URL', defaultManagerUrl()] as const;

  program
    .command('share <path>')
    .description('let a group (or the whole site) read a dataset or folder and what is in it')
    .option('--group <group>', 'share with this group')
    .option('--site', 'share with every signed-in user')
    .option('--manage', "the group's managers may also delete, re-import, pin and re-share")
    .option(...managerOpt)
    .action(
      async (
        path: string,
        opts: { group?: string; site?: boolean; manage?: boolean; manager: string },
      ) => {
        const group = audience(opts);
        const a = await withClient(opts.manager, (c) =>
          c.request<AccessView>('PUT', '/shares', {
            path: trim(path),
            ...(group !== undefined ? { group } : {}),
            ...(opts.manage ? { manage: true } : {}),
          }),
        );
        printAccess(a);
      },
    );

  program
    .command('unshare <path>')
    .description('stop sharing a dataset or folder with a group (or the site)')
    .option('--group <group>', 'the group to stop sharing with')
    .option('--site', 'stop sharing with every signed-in user')
    .option(...managerOpt)
    .action(async (path: string, opts: { group?: string; site?: boolean; manager: string }) => {
      const group = audience(opts);
      const query = new URLSearchParams({ path: trim(path), ...(group ? { group } : {}) });
      printAccess(
        await withClient(opts.manager, (c) =>
          c.request<AccessView>('DELETE', `/shares?${query.toString()}`),
        ),
      );
    });

  program
    .command('chown <path> <user>')
    .description('give a dataset or folder to another user (admin)')
    .option(...managerOpt)
    .action(async (path: string, username: string, opts: { manager: string }) => {
      printAccess(
        await withClient(opts.manager, (c) =>
          c.request<AccessView>('PUT', '/owner', { path: trim(path), username }),
        ),
      );
    });

  program
    .command('access <path>')
    .description('show who owns a dataset or folder and whom it is shared with')
    .option(...managerOpt)
    .action(async (path: string, opts: { manager: string }) => {
      const query = new URLSearchParams({ path: trim(path) });
      printAccess(
        await withClient(opts.manager, (c) =>
          c.request<AccessView>('GET', `/access?${query.toString()}`),
        ),
      );
    });

  registerGroup(program, managerOpt);
}

function printGroup(g: GroupView): void {
  const members = g.members.map((m) => (m.manager ? `${m.username} (manager)` : m.username));
  console.log(`${g.name.padEnd(20)} ${members.join(', ') || '-'}`);
}

function registerGroup(program: Command, managerOpt: readonly [string, string, string]): void {
  const group = program.command('group').description('research groups to share datasets with');

  group
    .command('create <name>')
    .description('create a group; you become its first manager')
    .option(...managerOpt)
    .action(async (name: string, opts: { manager: string }) => {
      printGroup(
        await withClient(opts.manager, (c) => c.request<GroupView>('POST', '/groups', { name })),
      );
    });

  group
    .command('add <name> <user>')
    .description("add a user to a group (the group's managers or an admin)")
    .option('--manager-role', "make them one of the group's managers")
    .option(...managerOpt)
    .action(
      async (name: string, user: string, opts: { managerRole?: boolean; manager: string }) => {
        const path = `/groups/${encodeURIComponent(name)}/members/${encodeURIComponent(user)}`;
        printGroup(
          await withClient(opts.manager, (c) =>
            c.request<GroupView>('PUT', path, { manager: opts.managerRole === true }),
          ),
        );
      },
    );

  group
    .command('remove <name> <user>')
    .description('remove a user from a group')
    .option(...managerOpt)
    .action(async (name: string, user: string, opts: { manager: string }) => {
      const path = `/groups/${encodeURIComponent(name)}/members/${encodeURIComponent(user)}`;
      printGroup(await withClient(opts.manager, (c) => c.request<GroupView>('DELETE', path)));
    });

  group
    .command('rm <name>')
    .description('delete a group (what was shared with it no longer is)')
    .option(...managerOpt)
    .action(async (name: string, opts: { manager: string }) => {
      await withClient(opts.manager, (c) =>
        c.request('DELETE', `/groups/${encodeURIComponent(name)}`),
      );
      console.error(`deleted group ${name}`);
    });

  group
    .command('ls')
    .description('list groups with their members')
    .option('--json', 'print JSON')
    .option(...managerOpt)
    .action(async (opts: { manager: string; json?: boolean }) => {
      const groups = await withClient(opts.manager, (c) =>
        c.request<GroupView[]>('GET', '/groups'),
      );
      if (opts.json) console.log(JSON.stringify(groups, null, 2));
      else for (const g of groups) printGroup(g);
      if (!opts.json && groups.length === 0) console.error('(no groups)');
    });
}
