#!/usr/bin/env node
import './baseline-wasm.js';
import { isFreeLoaderError } from '@freeloader/protocol';
import { buildProgram } from './program.js';

/**
 * `freeloader`: errors print as one human line (`error: …`) unless --debug asks for the stack.
 */
const program = buildProgram();

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
