import type { FastifyInstance } from 'fastify';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { SourcePolicy } from '@freeloader/sources';
import type { AdmitTransfer } from '../governor/governance.js';
import type { ManagerClient } from '../manager-client.js';
import { PatchRegistry } from './patch-registry.js';
import { registerPatchRoutes } from './patch-routes.js';

export interface AttachPatchingOptions {
  manager: ManagerClient;
  agentId: () => string | undefined;
  managerPublicKey: () => string | undefined;
  log: Logger;
  allowFileUris?: boolean;
  /** Which addresses patch downloads may fetch from. */
  sourcePolicy: SourcePolicy;
  /** Bytes served to clients (the governor counts them like morsel reads). */
  onServed?: (bytes: number) => void;
  /** The governor: patched morsels are served paced, source downloads admitted. */
  pace?: (body: Buffer | Readable) => Buffer | Readable;
  admit?: AdmitTransfer;
}

/**
 * Make an agent a patching node (seed 002 §3.3): add the patch routes to its morsel service
 * (before it listens) and return the registry to close on shutdown. Every agent can patch;
 * bandwidth-only agents do nothing else.
 *
 * @example this.patching = attachPatching(this.service, { manager, agentId, managerPublicKey, log });
 */
export function attachPatching(
  service: FastifyInstance,
  opts: AttachPatchingOptions,
): PatchRegistry {
  const registry = new PatchRegistry({
    manager: opts.manager,
    agentId: opts.agentId,
    log: opts.log,
    allowFileUris: opts.allowFileUris,
    sourcePolicy: opts.sourcePolicy,
    ...(opts.admit ? { admit: opts.admit } : {}),
  });
  registerPatchRoutes(service, {
    registry,
    agentId: opts.agentId,
    managerPublicKey: opts.managerPublicKey,
    onServed: opts.onServed,
    ...(opts.pace ? { pace: opts.pace } : {}),
  });
  return registry;
}
