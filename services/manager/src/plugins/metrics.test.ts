import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHarness, type Harness } from '../test/harness.js';
import { parsePrometheusText, type MetricFamily } from '../testing/prometheus-text.js';

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(async () => {
  await h?.close();
});

const family = (families: MetricFamily[], name: string): MetricFamily => {
  const f = families.find((x) => x.name === name);
  if (!f) throw new Error(`no ${name} in the scrape`);
  return f;
};

describe('GET /metrics', () => {
  it('answers the Prometheus text format with routes, heartbeats, jobs and datasets', async () => {
    const a = await h.enroll();
    for (let i = 0; i < 3; i++) {
      const hb = await h.call({
        method: 'POST',
        url: '/api/v1/agents/heartbeat',
        headers: { authorization: a.auth },
        payload: { quotaBytes: 1e6, usedBytes: 0, freeBytes: 1e6, servingRate: 0 },
      });
      expect(hb.statusCode).toBe(200);
    }
    await h.call({ method: 'GET', url: '/api/v1/health' });
    await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: a.agentId });
    await h.app.jobsRepo.enqueue({ kind: 'delete', agentId: a.agentId });
    await h.app.namespaceRepo.createDataset({ path: 'metrics/one', sizeBytes: 10 });

    const res = await h.call({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    const families = parsePrometheusText(res.body);

    const requests = family(families, 'freeloader_http_requests_total');
    expect(requests.type).toBe('COUNTER');
    expect(requests.metrics).toContainEqual({
      labels: { method: 'GET', route: '/api/v1/health', status: '200' },
      value: '1',
    });
    // Routes by pattern: one series for every heartbeat, whichever agent sent it.
    expect(requests.metrics).toContainEqual({
      labels: { method: 'POST', route: '/api/v1/agents/heartbeat', status: '200' },
      value: '3',
    });
    const latency = family(families, 'freeloader_http_request_duration_seconds');
    expect(latency.type).toBe('HISTOGRAM');
    expect(latency.metrics.every((m) => m.buckets?.['+Inf'] !== undefined)).toBe(true);
    // (The parser keeps a histogram's buckets but not its labels: those are read off the text.)
    expect(res.body).toContain(
      'freeloader_http_request_duration_seconds_count{method="POST",route="/api/v1/agents/heartbeat"} 3',
    );
    expect(family(families, 'freeloader_heartbeats_total').metrics).toEqual([
      { labels: { outcome: 'ok' }, value: '3' },
    ]);
    expect(family(families, 'freeloader_jobs').metrics).toContainEqual({
      labels: { kind: 'delete', state: 'queued' },
      value: '2',
    });
    expect(family(families, 'freeloader_datasets').metrics).toContainEqual({
      labels: { state: 'importing' },
      value: '1',
    });
    expect(family(families, 'freeloader_manager_process_cpu_seconds_total').type).toBe('COUNTER');
  });
});
