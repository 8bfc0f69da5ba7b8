import type { SourceProbe } from '@freeloader/protocol';
import { openSource } from '@freeloader/sources';
import type { Config } from '../config.js';

/** How long the manager waits for a source to answer its probe (milliseconds). */
const PROBE_TIMEOUT_MS = 20_000;

/** Whether `file:` sources may be probed (tests and single-machine setups). */
export interface ProbeDeps {
  config: Pick<Config, 'allowFileUris'>;
}

/**
 * Ask the source for size, validators and range support; errors are the source's, coded.
 * Imports size their placement with it; relocation asks it before evicting (is the data
 * still there to import again?).
 */
export async function probeSource(deps: ProbeDeps, uri: string): Promise<SourceProbe> {
  const source = openSource(uri, { allowFile: deps.config.allowFileUris, connections: 1 });
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
