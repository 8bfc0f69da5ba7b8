import { randomBytes } from 'node:crypto';
import type { Command } from 'commander';
import { FreeLoaderError, MIN_PASSWORD_LENGTH, type UserView } from '@freeloader/protocol';
import { defaultManagerUrl } from '../paths.js';
import { userClient } from '../session.js';

const ROLES = ['scientist', 'admin'] as const;

/** Role from the command line; VALIDATION_FAILED names the choices. */
export function parseRole(text: string): (typeof ROLES)[number] {
  const role = ROLES.find((r) => r === text);
  if (!role) {
    throw new FreeLoaderError('VALIDATION_FAILED', `role must be one of ${ROLES.join(', ')}`);
  }
  return role;
}

/**
 * `freeloader user create <name> [--role scientist|admin]` and `freeloader user list` (admin).
 * The password comes from FREELOADER_PASSWORD, or a random one is made and printed once.
 */
export function registerUser(program: Command): void {
  const user = program.command('user').description('manage console and CLI users (admin)');

  user
    .command('create <name>')
    .description(
      'create a user; prints a generated password once unless FREELOADER_PASSWORD is set',
    )
    .option('--role <role>', `${ROLES.join(' or ')}`, 'scientist')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .action(async (name: string, opts: { role: string; manager: string }) => {
      const role = parseRole(opts.role);
      const given = process.env.FREELOADER_PASSWORD;
      if (given !== undefined && given.length < MIN_PASSWORD_LENGTH) {
        throw new FreeLoaderError(
          'VALIDATION_FAILED',
          `FREELOADER_PASSWORD must have at least ${MIN_PASSWORD_LENGTH} characters`,
        );
      }
      const password = given ?? randomBytes(15).toString('base64url');
      const client = await userClient(opts.manager);
      try {
        const created = await client.request<UserView>('POST', '/users', {
          username: name,
          password,
          role,
        });
        console.error(`created ${created.role} "${created.username}" (id ${created.id})`);
        if (given === undefined) {
          // The secret goes alone on stdout (so `$(…)` takes it); its label on stderr, first.
          console.error('password (shown once):');
          console.log(password);
        }
      } finally {
        await client.close();
      }
    });

  user
    .command('list')
    .description('list users')
    .option('--manager <url>', 'manager URL', defaultManagerUrl())
    .action(async (opts: { manager: string }) => {
      const client = await userClient(opts.manager);
      try {
        for (const u of await client.request<UserView[]>('GET', '/users')) {
          console.log(`${u.username.padEnd(24)} ${u.role.padEnd(9)} ${u.id}`);
        }
      } finally {
        await client.close();
      }
    });
}
