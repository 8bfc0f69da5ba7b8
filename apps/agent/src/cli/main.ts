#!/usr/bin/env node
import { Command } from 'commander';
import { isFreeLoaderError } from '@freeloader/protocol';
import { registerAgent } from './commands/agent.js';
import { registerCluster } from './commands/cluster.js';
import { registerGet } from './commands/get.js';
import { registerImport } from './commands/import.js';
import { registerLogin } from './commands/login.js';
import { registerManager } from './commands/manager.js';
import { registerMount, registerUnmount } from './commands/mount.js';
import { registerNamespace, registerRemove } from './commands/namespace.js';
import { registerToken } from './commands/token.js';
import { registerUser } from './commands/user.js';
import { registerCache, registerSource } from './commands/source.js';

/**
 * `freeloader`: one command, one subcommand per job. Errors print as one human line
 * (`error: …`) unless --debug asks for the stack.
 */
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
registerImport(program);
registerGet(program);
registerCluster(program);
registerMount(program);
registerUnmount(program);
registerSource(program);
registerCache(program);

try {
  await program.parseAsync(process.argv);
} catch (e) {
  reportError(e, program.opts<{ debug?: boolean }>().debug === true);
  process.exitCode = 1;
}

function reportError(e: unknown, debug: boolean): void {
  if (debug) {
    console.error(e);
    return;
  }
  if (isFreeLoaderError(e)) {
    console.error(`error: ${e.message} [${e.code}]`);
  } else if (e instanceof Error) {
    console.error(`error: ${e.message}`);
  } else {
    console.error(`error: ${String(e)}`);
  }
}
