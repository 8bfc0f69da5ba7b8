import {
  FreeLoaderError,
  MAP_HASH_PAGE_MORSELS,
  type DatasetMap,
  type DatasetView,
} from '@freeloader/protocol';
import type { ManagerClient } from '../manager-client.js';
import { MapHashes } from './map-hashes.js';
import { attachSuffixPlan } from './suffix-plan.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Resolve a dataset given by namespace path or id and fetch its map with a read capability. The
 * map carries the hashes of the first MAP_HASH_PAGE_MORSELS morsels only: read the rest through
 * {@link mapHashesOf}, page by page ahead of the reader.
 */
export async function fetchMap(manager: ManagerClient, dataset: string): Promise<DatasetMap> {
  let id = dataset;
  if (!UUID.test(dataset)) {
    const path = dataset.replace(/^\/+|\/+$/g, '');
    const view = await manager.request<DatasetView>(
      'GET',
      `/datasets/by-path?path=${encodeURIComponent(path)}`,
    );
    id = view.id;
  }
  const map = await manager.request<DatasetMap>(
    'GET',
    `/datasets/${id}/map?first=0&count=${MAP_HASH_PAGE_MORSELS}`,
  );
  if (map.dataset.state !== 'ready') {
    throw new FreeLoaderError(
      'DATASET_NOT_READY',
      `dataset ${map.dataset.path} is ${map.dataset.state}${map.dataset.error ? `: ${map.dataset.error}` : ''}`,
    );
  }
  // Partly cached (seed 002): start patching the suffix now, while the prefix is read. Encrypted
  // datasets too: the nodes serve the source's plain bytes, which the reader checks against the
  // map's tags (suffix-check.ts).
  await attachSuffixPlan(manager, map);
  return map;
}

/**
 * The hashes (and an encrypted dataset's tags) of a map from {@link fetchMap}: its first page,
 * then the rest from the manager as binary pages (32 bytes a morsel, 16 for tags) as the reader
 * gets to them.
 *
 * @example new DatasetReader(map, { mapHashes: mapHashesOf(manager, map) })
 */
export function mapHashesOf(manager: ManagerClient, map: DatasetMap): MapHashes {
  const pageOf =
    (of: 'hashes' | 'tags') =>
    (first: number, count: number): Promise<Buffer> =>
      manager.getBytes(`/datasets/${map.dataset.id}/map?first=${first}&count=${count}&of=${of}`);
  return new MapHashes(map, pageOf('hashes'), MAP_HASH_PAGE_MORSELS, pageOf('tags'));
}
