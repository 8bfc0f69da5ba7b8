import { describe, expect, it, vi } from 'vitest';
import { EventBus } from '../events.js';
import { createDonorLoss } from './donor-loss.js';

const flush = () => new Promise((r) => setImmediate(r));

describe('donor-loss hook', () => {
  it('runs every registered handler, in order, when a donor is declared dead', () => {
    const events = new EventBus();
    const loss = createDonorLoss({ events, log: { error: vi.fn() } });
    const seen: string[] = [];
    loss.register('a', (id) => void seen.push(`a:${id}`));
    loss.register('b', (id) => void seen.push(`b:${id}`));
    events.publish({ type: 'agent', agentId: 'x', state: 'stale' });
    events.publish({ type: 'dataset', datasetId: 'd', state: 'ready' });
    expect(seen).toEqual([]);
    events.publish({ type: 'agent', agentId: 'x', state: 'dead' });
    expect(seen).toEqual(['a:x', 'b:x']);
  });

  it('logs a handler that throws or rejects and still runs the others', async () => {
    const events = new EventBus();
    const error = vi.fn();
    const loss = createDonorLoss({ events, log: { error } });
    const ran = vi.fn();
    loss.register('throws', () => {
      throw new Error('boom');
    });
    loss.register('rejects', () => Promise.reject(new Error('later')));
    loss.register('fine', ran);
    events.publish({ type: 'agent', agentId: 'x', state: 'dead' });
    await flush();
    expect(ran).toHaveBeenCalledWith('x');
    expect(error).toHaveBeenCalledTimes(2);
    expect(error.mock.calls.map((c) => (c[0] as { handler: string }).handler)).toEqual([
      'throws',
      'rejects',
    ]);
  });

  it('stops calling a handler once unregistered, and everything once closed', () => {
    const events = new EventBus();
    const loss = createDonorLoss({ events, log: { error: vi.fn() } });
    const a = vi.fn();
    const b = vi.fn();
    const offA = loss.register('a', a);
    loss.register('b', b);
    offA();
    events.publish({ type: 'agent', agentId: 'x', state: 'dead' });
    expect(a).not.toHaveBeenCalled();
    expect(b).toHaveBeenCalledTimes(1);
    loss.close();
    events.publish({ type: 'agent', agentId: 'y', state: 'dead' });
    expect(b).toHaveBeenCalledTimes(1);
    expect(events.listenerCount).toBe(0);
  });
});
