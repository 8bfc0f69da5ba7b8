import Fastify from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installAgentMetrics } from './agent-metrics.js';

describe('installAgentMetrics', () => {
  const app = Fastify();
  let text = '';
  beforeAll(async () => {
    installAgentMetrics(app, {
      servedBytes: () => 5 * 2 ** 20,
      governor: () => ({ state: 'idle', capBps: null }),
      jobs: () => ({ running: 2, reportsPending: 1 }),
      usage: () => ({ quotaBytes: 2 ** 30, usedBytes: 2 ** 20 }),
    });
    await app.ready();
    text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
  });
  afterAll(() => app.close());

  // The event-loop lag figures stay with the coarse sampling (EVENT_LOOP_SAMPLE_MS) that keeps
  // an idle agent from waking 100 times a second.
  it.each([
    ['event-loop lag', /^freeloader_agent_nodejs_eventloop_lag_max_seconds \S+$/m],
    ['bytes served', /^freeloader_agent_served_bytes_total 5242880$/m],
    ['governor state', /^freeloader_agent_governor_state\{state="idle"\} 1$/m],
    ['governor cap', /^freeloader_agent_governor_cap_bytes_per_second \+Inf$/m],
    ['jobs running', /^freeloader_agent_jobs_running 2$/m],
    ['store used', /^freeloader_agent_store_bytes\{kind="used"\} 1048576$/m],
  ])('reports %s', (_name, line) => {
    expect(text).toMatch(line);
  });
});
