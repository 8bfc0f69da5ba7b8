import { mkdir, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import type { LoginResponse } from '@freeloader/protocol';
import { ManagerClient, normalizeManagerUrl } from '../../manager-client.js';
import { learnManagerCa, terminalQuestion } from '../manager-trust.js';
import { cliSessionPath, defaultManagerUrl } from '../paths.js';
import { promptHidden } from '../prompt.js';
import { readSavedSession, type SavedSession } from '../session.js';

export function registerLogin(program: Command): void {
  program
    .command('login')
    .description('sign in to a manager and remember the session for this user (mode 0600)')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--user <name>', 'user name', 'admin')
    .option(
      '--ca-fingerprint <sha256:hex>',
      "an https:// manager's CA fingerprint, as its admin gives it (or FREELOADER_CA_FINGERPRINT); " +
        'without it a new CA is shown and trusted only when you confirm it',
      process.env.FREELOADER_CA_FINGERPRINT,
    )
    .action(async (opts: { manager: string; user: string; caFingerprint?: string }) => {
      const managerUrl = normalizeManagerUrl(opts.manager);
      // The CA is settled before the password is asked for, let alone sent.
      let managerCa: string | undefined;
      if (managerUrl.startsWith('https:')) {
        const saved = await readSavedSession();
        const ask = terminalQuestion();
        // A list of managers shares one CA (their TLS files): the first one shows it.
        managerCa = await learnManagerCa(managerUrl.split(',')[0]!, {
          ...(opts.caFingerprint ? { fingerprint: opts.caFingerprint } : {}),
          ...(saved?.managerUrl === managerUrl && saved.managerCa
            ? { savedCa: saved.managerCa }
            : {}),
          ...(ask ? { ask } : {}),
        });
      }
      const password =
        process.env.FREELOADER_PASSWORD ?? (await promptHidden(`password for ${opts.user}: `));
      const client = new ManagerClient(managerUrl, undefined, { ca: managerCa });
      try {
        const res = await client.request<LoginResponse>('POST', '/auth/login', {
          username: opts.user,
          password,
        });
        const path = cliSessionPath();
        await mkdir(dirname(path), { recursive: true, mode: 0o700 });
        const session: SavedSession = {
          managerUrl: client.managerUrls,
          token: res.token,
          username: res.user.username,
          ...(managerCa ? { managerCa } : {}),
        };
        await writeFile(path, JSON.stringify(session) + '\n', { mode: 0o600 });
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
