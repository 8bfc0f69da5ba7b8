import fp from 'fastify-plugin';
import { createClientRates, type ClientRates } from './client-rates.js';
import { watermarkSweep } from './eviction.js';
import { createPrefixExtensions, type PrefixExtensions } from './extension-trigger.js';
import { createPatchSessions, type PatchSessions } from './patch-sessions.js';
import { createSourceRegistry, type SourceRegistry } from './source-registry.js';
import { sourceKey } from './source-key.js';

/** How often cache use is checked against the watermarks (ms); 0 disables the timer. */
const SWEEP_MS = Number(process.env.FREELOADER_EVICTION_INTERVAL_MS ?? 30_000);
/** Imports smaller than this say little about a source's bulk rate (bytes). */
const MIN_RATE_SAMPLE = 8 * 1024 * 1024;

export interface PrefixServices {
  sources: SourceRegistry;
  clients: ClientRates;
  sessions: PatchSessions;
  extensions: PrefixExtensions;
}

declare module 'fastify' {
  interface FastifyInstance {
    prefixCache: PrefixServices;
  }
}

/**
 * Prefix caching on the manager: the source registry, client rates, patch sessions, and the
 * watermark sweep. A finished import teaches the registry the source's import rate.
 */
export interface PrefixCachingOptions {
  /** Run the watermark sweep timer (tests call `watermarkSweep` by hand). Default true. */
  timers?: boolean;
}

export default fp<PrefixCachingOptions>(
  async (app, opts) => {
    const prefix: PrefixServices = {
      sources: createSourceRegistry(app.pg),
      clients: createClientRates(app.pg),
      sessions: undefined as unknown as PatchSessions,
      extensions: undefined as unknown as PrefixExtensions,
    };
    app.decorate('prefixCache', prefix);
    prefix.sessions = createPatchSessions(app);
    prefix.extensions = createPrefixExtensions(app);

    const offLoss = app.donorLoss.register('prefix-extensions', (agentId) => {
      void prefix.extensions
        .donorDied(agentId)
        .catch((e: unknown) => app.log.warn({ err: e }, 'abandoning extensions failed'));
    });
    const off = app.events.subscribe((event) => {
      if (event.type !== 'dataset' || event.state !== 'ready') return;
      void learnImportRate(event.datasetId).catch((e: unknown) =>
        app.log.warn({ err: e }, 'recording an import rate failed'),
      );
    });
    const learned = new Set<string>();
    async function learnImportRate(datasetId: string): Promise<void> {
      if (learned.has(datasetId)) return;
      const { rows } = await app.pg.query<{ uri: string; bytes: number; seconds: number }>(
        `SELECT source_uri AS uri, cached_bytes AS bytes,
                extract(epoch FROM now() - created_at)::float8 AS seconds
         FROM datasets WHERE id = $1 AND state = 'ready' AND source_uri IS NOT NULL
           AND created_at > now() - interval '1 day'`,
        [datasetId],
      );
      const r = rows[0];
      const key = sourceKey(r?.uri);
      if (!r || !key || r.bytes < MIN_RATE_SAMPLE || !(r.seconds > 0)) return;
      learned.add(datasetId);
      if (learned.size > 10_000) learned.delete(learned.values().next().value!);
      await prefix.sources.observe(key, { importRate: r.bytes / r.seconds });
    }

    let timer: NodeJS.Timeout | undefined;
    let sweeping = false;
    if (SWEEP_MS > 0 && opts.timers !== false) {
      timer = setInterval(() => {
        if (sweeping) return;
        sweeping = true;
        watermarkSweep(app)
          .catch((e: unknown) => app.log.warn({ err: e }, 'watermark sweep failed'))
          .finally(() => (sweeping = false));
      }, SWEEP_MS);
      timer.unref();
    }
    app.addHook('onClose', async () => {
      off();
      offLoss();
      clearInterval(timer);
      await prefix.extensions.idle();
    });
  },
  {
    name: 'prefix-caching',
    dependencies: ['postgres', 'placement-repo', 'namespace-repo', 'donor-loss'],
  },
);
