import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { MAX_BATCH_MORSELS, MAX_MORSELS_PER_DATASET } from '../limits.js';
import {
  batchPath,
  datasetMorselsPath,
  morselPath,
  parseBatchPath,
  parseMorselPath,
  patchMorselPath,
  patchSessionPath,
} from './morsel-paths.js';

const id = randomUUID();
const uuid = '0d9c0a52-3f0e-4c1e-9d55-8a1f2c3b4d5e';

describe('morsel paths', () => {
  it.each([0, 1, 7, 1023, MAX_MORSELS_PER_DATASET - 1])(
    'parse what they build: morsel %i',
    (index) => {
      expect(parseMorselPath(morselPath(id, index))).toEqual({ datasetId: id, index });
    },
  );

  it.each([
    [0, 1],
    [5, 8],
    [MAX_MORSELS_PER_DATASET - 1, MAX_BATCH_MORSELS],
  ])('parse what they build: batch from %i count %i', (from, count) => {
    expect(parseBatchPath(batchPath(id, from, count))).toEqual({ datasetId: id, from, count });
  });

  it.each([
    ['the literal form', morselPath(uuid, 7), `/v1/morsels/${uuid}/7`],
    ['a whole dataset', datasetMorselsPath(uuid), `/v1/morsels/${uuid}`],
    ['a batch', batchPath(uuid, 3, 4), `/v1/morsels/${uuid}?from=3&count=4`],
    ['a patch session', patchSessionPath(uuid, id), `/v1/patch/${uuid}/${id}`],
    ['a patched morsel', patchMorselPath(uuid, id, 9), `/v1/patch/${uuid}/${id}/9`],
  ])('%s is spelled as the routes expect', (_what, built, literal) => {
    expect(built).toBe(literal);
  });

  it.each([
    ['a leading zero', `/v1/morsels/${uuid}/07`],
    ['a negative index', `/v1/morsels/${uuid}/-1`],
    ['an index past the limit', `/v1/morsels/${uuid}/${MAX_MORSELS_PER_DATASET}`],
    ['an upper-case id', `/v1/morsels/${uuid.toUpperCase()}/7`],
    ['not a uuid', '/v1/morsels/abc/7'],
    ['a query', `/v1/morsels/${uuid}/7?cap=x`],
    ['a trailing slash', `/v1/morsels/${uuid}/7/`],
    ['the batch route', `/v1/morsels/${uuid}?from=0&count=1`],
  ])('a morsel path with %s is not canonical', (_what, path) => {
    expect(parseMorselPath(path)).toBeUndefined();
  });

  it.each([
    ['no count', `/v1/morsels/${uuid}?from=0`],
    ['swapped parameters', `/v1/morsels/${uuid}?count=1&from=0`],
    ['a morsel path', `/v1/morsels/${uuid}/0`],
  ])('a batch path with %s is not canonical', (_what, path) => {
    expect(parseBatchPath(path)).toBeUndefined();
  });
});
