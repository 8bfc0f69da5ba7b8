import fp from 'fastify-plugin';
import { recentImportSample } from '../repositories/prefix-sources.js';
import { createCacheAdmin, type CacheAdmin } from './cache-admin.js';
import { createClientRates, type ClientRates } from './client-rates.js';
import { watermarkSweep } from './eviction.js';
import type { ExtensionStartDeps } from './extend-prefix.js';
import { createPrefixExtensions, type PrefixExtensions } from './extension-trigger.js';
import {
  createPatchSessions,
  type PatchSessionDeps,
  type PatchSessions,
} from './patch-sessions.js';
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
  cache: CacheAdmin;
}

declare module 'fastify' {
  interface FastifyInstance {
    prefixCache: PrefixServices;
  }
}

/**
 * Prefix caching on the manager: the source registry, client rates, patch sessions, the cache's
 * status, pins and cuts, and the watermark sweep. A finished import teaches the registry the source's import rate.
 */
export interface PrefixCachingOptions {
  /** Run the watermark sweep timer (tests call `watermarkSweep` by hand). Default true. */
  timers?: boolean;
}

export default fp<PrefixCachingOptions>(
  async (app, opts) => {
    const sources = createSourceRegistry(app.pg);
    const clients = createClientRates(app.pg);
    // The one deps object prefix caching's domain functions receive.
    const deps: ExtensionStartDeps & PatchSessionDeps = {
      pg: app.pg,
      log: app.log,
      events: app.events,
      softState: app.softState,
      signingKeys: app.signingKeys,
      dataKeys: app.dataKeys,
      namespaceRepo: app.namespaceRepo,
      sources,
      reservationsRepo: app.reservationsRepo,
      agentsRepo: app.agentsRepo,
    };
    const prefix: PrefixServices = {
      sources,
      clients,
      sessions: createPatchSessions(deps),
      extensions: createPrefixExtensions(deps),
      cache: createCacheAdmin(deps),
    };
    app.decorate('prefixCache', prefix);

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
      const r = await recentImportSample(app.pg, datasetId);
      const key = sourceKey(r?.uri);
      if (!r || !key || r.bytes < MIN_RATE_SAMPLE || !(r.seconds > 0)) return;
      learned.add(datasetId);
      if (learned.size > 10_000) learned.delete(learned.values().next().value!);
      await prefix.sources.observe(key, { importRate: r.bytes / r.seconds });
    }

    if (SWEEP_MS > 0 && opts.timers !== false) {
      // Cache use is shared: one manager of the database sweeps at a time.
      app.singletons.start('eviction', () => watermarkSweep(deps), SWEEP_MS, { runAtStart: false });
    }
    app.addHook('onClose', async () => {
      off();
      offLoss();
      await prefix.extensions.idle();
    });
  },
  {
    name: 'prefix-caching',
    dependencies: [
      'postgres',
      'placement-repo',
      'namespace-repo',
      'donor-loss',
      'singletons',
      'data-keys',
    ],
  },
);
