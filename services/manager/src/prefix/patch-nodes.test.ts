import { describe, expect, it } from 'vitest';
import { rankPatchNodes, type NodeCandidate } from './patch-nodes.js';

const node = (id: string, o: Partial<NodeCandidate> = {}): NodeCandidate => ({
  id,
  url: `http://${id}`,
  bandwidthOnly: false,
  holder: false,
  servingRate: 0,
  ...o,
});

describe('rankPatchNodes', () => {
  it.each<[string, NodeCandidate[], string[]]>([
    [
      'bandwidth-only first, then idle non-holders, idle holders, busy donors',
      [
        node('busy', { servingRate: 50e6 }),
        node('holder', { holder: true }),
        node('idle'),
        node('bw', { bandwidthOnly: true }),
      ],
      ['bw', 'idle', 'holder', 'busy'],
    ],
    [
      'within a tier, the less busy first, then by id',
      [node('b', { servingRate: 10 }), node('c'), node('a', { servingRate: 10 })],
      ['c', 'a', 'b'],
    ],
    ['nobody', [], []],
  ])('%s', (_name, input, order) => {
    expect(rankPatchNodes(input).map((n) => n.id)).toEqual(order);
  });
});
