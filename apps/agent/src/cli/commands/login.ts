import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import type { LoginResponse } from '@freeloader/protocol';
import { ManagerClient } from '../../manager-client.js';
import { cliSessionPath, defaultManagerUrl } from '../paths.js';
import { promptHidden } from '../prompt.js';

export function registerLogin(program: Command): void {
  program
    .command('login')
    .description('sign in to a manager and remember the session for this user (mode 0600)')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--user <name>', 'user name', 'admin')
    .action(async (opts: { manager: string; user: string }) => {
      const password =
        process.env.FREELOADER_PASSWORD ?? (await promptHidden(`password for ${opts.user}: `));
      const client = new ManagerClient(opts.manager);
      try {
        const res = await client.request<LoginResponse>('POST', '/auth/login', {
          username: opts.user,
          password,
        });
        const path = cliSessionPath();
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        await writeFile(
          path,
          JSON.stringify({
            managerUrl: client.managerUrls,
            token: res.token,
            username: res.user.username,
          }) + '\n',
          { mode: 0o600 },
        );
        console.error(`signed in to ${client.baseUrl} as ${res.user.username} (${res.user.role})`);
      } finally {
        await client.close();
      }
    });

  program
    .command('logout')
    .description('forget the saved session')
    .action(async () => {
      await rm(cliSessionPath(), { force: true });
      console.error('signed out');
    });
}
