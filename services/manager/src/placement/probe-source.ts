import type { SourceProbe } from '@freeloader/protocol';
import { openSource } from '@freeloader/sources';
import type { Config } from '../config.js';
import type { ManagerSourcePolicy } from './source-policy.js';

/** How long the manager waits for a source to answer its probe (milliseconds). */
const PROBE_TIMEOUT_MS = 20_000;

/** Whether `file:` sources may be probed (tests and single-machine setups), which hosts may be. */
export interface ProbeDeps {
  config: Pick<Config, 'allowFileUris'>;
  sourcePolicy: Pick<ManagerSourcePolicy, 'current'>;
}

/**
 * Ask the source for size, validators and range support; errors are the source's, coded
 * (SOURCE_FORBIDDEN for a loopback, private … address the admin has not allowed).
 * Imports size their placement with it; relocation asks it before evicting (is the data
 * still there to import again?).
 */
export async function probeSource(deps: ProbeDeps, uri: string): Promise<SourceProbe> {
  const source = openSource(uri, {
    allowFile: deps.config.allowFileUris,
    connections: 1,
    policy: await deps.sourcePolicy.current(),
  });
  try {
    const info = await source.probe(AbortSignal.timeout(PROBE_TIMEOUT_MS));
    return {
      uri,
      size: info.size,
      etag: info.etag,
      lastModified: info.lastModified,
      acceptsRanges: info.acceptsRanges,
    };
  } finally {
    await source.close().catch(() => undefined);
  }
}
