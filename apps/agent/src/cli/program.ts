import { Command } from 'commander';
import { registerAgent } from './commands/agent.js';
import { registerCluster } from './commands/cluster.js';
import { registerGet } from './commands/get.js';
import { registerImport } from './commands/import.js';
import { registerLogin } from './commands/login.js';
import { registerManager } from './commands/manager.js';
import { registerMount, registerUnmount } from './commands/mount.js';
import { registerNamespace, registerRemove } from './commands/namespace.js';
import { registerSharing } from './commands/sharing.js';
import { registerToken } from './commands/token.js';
import { registerUser } from './commands/user.js';
import { registerCache, registerSource } from './commands/source.js';

/**
 * `freeloader`'s command tree: one command, one subcommand per job. Built without parsing, so
 * tests can compare it with the README's CLI reference.
 *
 * @example await buildProgram().parseAsync(['node', 'freeloader', 'ls'])
 */
export function buildProgram(): Command {
  const program = new Command()
    .name('freeloader')
    .description(
      'FreeLoader: a storage cache for large scientific datasets built from idle workstations',
    )
    .version('0.1.0')
    .option('--debug', 'print stack traces on errors')
    .showHelpAfterError();

  registerManager(program);
  registerAgent(program);
  registerToken(program);
  registerUser(program);
  registerLogin(program);
  registerNamespace(program);
  registerRemove(program);
  registerSharing(program);
  registerImport(program);
  registerGet(program);
  registerCluster(program);
  registerMount(program);
  registerUnmount(program);
  registerSource(program);
  registerCache(program);
  return program;
}
