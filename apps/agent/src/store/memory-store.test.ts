import { corruptHeldBuffer, runStoreConformance } from './conformance.js';
import { MemoryStore } from './memory-store.js';

runStoreConformance('MemoryStore', async (opts) => {
  const store = new MemoryStore(opts);
  return { store, dispose: () => store.close(), corruptOnlyMorsel: corruptHeldBuffer(store) };
});
