import { describe, expect, it } from 'vitest';
import { planKnobs } from './suffix-plan.js';

describe('planKnobs', () => {
  it.each([
    [{}, {}],
    [{ FREELOADER_PATCH_WIDTH: '4' }, { width: 4 }],
    [{ FREELOADER_PATCH_REQUEST_SIZE: '1048576' }, { requestSize: 1048576 }],
    [{ FREELOADER_PATCH_WIDTH: '0', FREELOADER_PATCH_REQUEST_SIZE: 'big' }, {}],
    [{ FREELOADER_PATCH_WIDTH: '2.5' }, {}],
  ])('%j → %j', (env, knobs) => expect(planKnobs(env)).toEqual(knobs));
});
