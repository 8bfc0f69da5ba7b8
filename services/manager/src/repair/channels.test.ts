import { describe, expect, it } from 'vitest';
import { RepairChannels } from './channels.js';

describe('RepairChannels', () => {
  it('offers the receiver of a one-to-one pair, once', () => {
    const ch = new RepairChannels([{ agentId: 'r', sourceAgents: ['s'] }]);
    expect(ch.chainTo('s')).toBe('r');
    ch.add({ agentId: 'r', sourceAgents: ['s'] });
    expect(ch.chainTo('s')).toBeUndefined();
  });

  it('offers nothing when the sender feeds two receivers or the receiver reads two senders', () => {
    const fanOut = new RepairChannels([
      { agentId: 'r1', sourceAgents: ['s'] },
      { agentId: 'r2', sourceAgents: ['s'] },
    ]);
    expect(fanOut.chainTo('s')).toBeUndefined();
    const fanIn = new RepairChannels([{ agentId: 'r', sourceAgents: ['s', 't'] }]);
    expect(fanIn.chainTo('s')).toBeUndefined();
    expect(fanIn.chainTo('t')).toBeUndefined();
  });

  it('offers nothing to a sender that sends nowhere, nor behind a job reading the source', () => {
    const ch = new RepairChannels([{ agentId: 'r', sourceAgents: [] }]);
    expect(ch.chainTo('s')).toBeUndefined();
    ch.add({ agentId: 'r', sourceAgents: ['s'] });
    expect(ch.chainTo('s')).toBeUndefined();
  });
});
