import fp from 'fastify-plugin';
import { MORSEL_SIZE } from '@freeloader/protocol';
import type { CacheRoom } from '../placement/import-policy.js';
import { waitForDeletes } from './eviction.js';
import { makeRoom } from './make-room.js';
import { prefixFromStats } from './prefix-sizing.js';
import { sourceKey } from './source-key.js';

/**
 * Prefix caching's side of the import policy (`placement/import-policy.ts`): placement asks
 * through the `CacheRoom` interface, so it never imports this folder.
 */
export default fp(
  async (app) => {
    const room: CacheRoom = {
      async prefixTarget(probe, client, morselSize) {
        const key = sourceKey(probe.uri);
        const stats = key ? await app.prefixCache.sources.get(key) : null;
        return probe.acceptsRanges
          ? prefixFromStats(
              probe.size,
              morselSize ?? MORSEL_SIZE,
              stats,
              await app.prefixCache.clients.rateOf(client),
            )
          : probe.size;
      },
      holdExtensions: () => app.prefixCache.extensions.hold(),
      makeRoom: (input) => makeRoom(app, input),
      waitForDeletes: (cuts) => waitForDeletes(app, cuts),
      async observeProbe(uri, ms) {
        const key = sourceKey(uri);
        if (key) await app.prefixCache.sources.observe(key, { latencyS: ms / 1000 });
      },
    };
    app.decorate('cacheRoom', room);
  },
  { name: 'cache-room', dependencies: ['prefix-caching'] },
);
