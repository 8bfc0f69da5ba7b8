import type { Command } from 'commander';
import {
  DEFAULT_AGENT_PORT,
  type JoinTokenCreated,
  type JoinTokenView,
} from '@freeloader/protocol';
import { defaultManagerUrl } from '../paths.js';
import { userClient } from '../session.js';
import { parseDuration } from './duration.js';

export function registerToken(program: Command): void {
  const token = program.command('token').description('manage join tokens (admin)');

  token
    .command('create')
    .description('create a join token and print the enrollment command')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .option('--ttl <duration>', 'lifetime, e.g. 1h, 7d', '7d')
    .option('--uses <n>', 'how many agents may enroll with it', '1')
    .option('--note <text>', 'a note to remember it by')
    .action(async (opts: { manager: string; ttl: string; uses: string; note?: string }) => {
      const client = await userClient(opts.manager);
      try {
        const created = await client.request<JoinTokenCreated>('POST', '/tokens', {
          ttlSeconds: parseDuration(opts.ttl),
          maxUses: Number(opts.uses),
          ...(opts.note ? { note: opts.note } : {}),
        });
        // The secret goes alone on stdout (so `$(…)` takes it); its label on stderr, first.
        console.error('join token (shown once):');
        console.log(created.token);
        console.error(
          `expires ${created.expiresAt}; ${created.maxUses} use(s). Enroll a donor with:\n` +
            `  freeloader agent --manager ${client.baseUrl} --token ${created.token} --dir ~/.freeloader/agent --quota 20GiB --listen 0.0.0.0:${DEFAULT_AGENT_PORT}\n` +
            '(--listen 0.0.0.0 serves morsels on every interface, so other machines can read them; ' +
            'give one interface address, e.g. --listen 10.0.0.5:7401, to restrict it)',
        );
      } finally {
        await client.close();
      }
    });

  token
    .command('list')
    .description('list join tokens')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .action(async (opts: { manager: string }) => {
      const client = await userClient(opts.manager);
      try {
        const list = await client.request<JoinTokenView[]>('GET', '/tokens');
        for (const t of list) {
          const state = t.revoked ? 'revoked' : t.uses >= t.maxUses ? 'used' : 'active';
          console.log(
            `${t.id}  ${state.padEnd(7)}  ${t.uses}/${t.maxUses} uses  expires ${t.expiresAt}  ${t.note ?? ''}`,
          );
        }
      } finally {
        await client.close();
      }
    });

  token
    .command('revoke <id>')
    .description('revoke a join token')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .action(async (id: string, opts: { manager: string }) => {
      const client = await userClient(opts.manager);
      try {
        await client.request('DELETE', `/tokens/${encodeURIComponent(id)}`);
        console.error(`revoked ${id}`);
      } finally {
        await client.close();
      }
    });
}
