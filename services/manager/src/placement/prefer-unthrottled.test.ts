import { describe, expect, it } from 'vitest';
import { MiB } from '@freeloader/protocol';
import type { Candidate } from './candidates.js';
import { candidateSets } from './prefer-unthrottled.js';

const c = (id: string, throttle?: string, freeBytes = 100 * MiB): Candidate => ({
  id,
  url: `http://${id}`,
  freeBytes,
  ...(throttle ? { throttle } : {}),
});

describe('candidateSets', () => {
  it.each([
    ['all idle: one set', [c('a'), c('b', 'idle')], 8, [['a', 'b']]],
    ['a paused donor is tried last', [c('a'), c('b', 'paused')], 8, [['a'], ['a', 'b']]],
    [
      'active donors are left out only when the width does not shrink',
      [c('a'), c('b'), c('c', 'active')],
      2,
      [
        ['a', 'b'],
        ['a', 'b', 'c'],
      ],
    ],
    [
      'width would shrink: active donors stay, paused still left out',
      [c('a'), c('b', 'active'), c('c', 'paused')],
      8,
      [
        ['a', 'b'],
        ['a', 'b', 'c'],
      ],
    ],
    ['everyone throttled: everyone', [c('a', 'active'), c('b', 'contended')], 8, [['a', 'b']]],
  ])('%s', (_name, cands, width, expected) => {
    expect(candidateSets(cands, width).map((s) => s.map((x) => x.id))).toEqual(expected);
  });
});
