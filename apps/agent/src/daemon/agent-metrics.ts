import type { FastifyInstance } from 'fastify';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { EVENT_LOOP_SAMPLE_MS } from '@freeloader/protocol';

/** What the agent's `/metrics` reads at scrape time; the daemon supplies it. */
export interface AgentMetricSources {
  /** Bytes served to clients since the daemon started. */
  servedBytes(): number;
  /** The governor's state ('idle', 'active', 'paused', …) and serving cap (bytes/s, null: none). */
  governor(): { state: string; capBps: number | null };
  /** Jobs running now, and final job reports waiting for the manager. */
  jobs(): { running: number; reportsPending: number };
  /** The store's quota and use (bytes). */
  usage(): { quotaBytes: number; usedBytes: number };
}

/** Request latency buckets (seconds): a morsel read on the LAN, up to a slow disk. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5];

/**
 * Add `GET /metrics` (Prometheus text format) to the agent's morsel service: requests and
 * latencies per route, bytes served, the governor's state and cap, jobs running, reports
 * undelivered, and the store's use. Call before the service listens.
 *
 * @example installAgentMetrics(service, { servedBytes: () => n, … }); // then GET /metrics
 */
export function installAgentMetrics(app: FastifyInstance, sources: AgentMetricSources): Registry {
  const registry = new Registry();
  collectDefaultMetrics({
    register: registry,
    prefix: 'freeloader_agent_',
    eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
  });
  const requests = new Counter({
    name: 'freeloader_agent_http_requests_total',
    help: 'Requests the morsel service answered, by method, route pattern and status code',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const latency = new Histogram({
    name: 'freeloader_agent_http_request_duration_seconds',
    help: 'Time to answer a morsel service request, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  new Counter({
    name: 'freeloader_agent_served_bytes_total',
    help: 'Bytes served to clients since the agent started',
    registers: [registry],
    collect() {
      this.reset();
      this.inc(sources.servedBytes());
    },
  });
  new Gauge({
    name: 'freeloader_agent_governor_cap_bytes_per_second',
    help: "The governor's serving cap (bytes/s; +Inf: none, 0: paused)",
    registers: [registry],
    collect() {
      this.set(sources.governor().capBps ?? Infinity);
    },
  });
  new Gauge({
    name: 'freeloader_agent_governor_state',
    help: "1 for the governor's current state (idle, active, contended, paused, unknown)",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      this.reset();
      this.set({ state: sources.governor().state }, 1);
    },
  });
  new Gauge({
    name: 'freeloader_agent_jobs_running',
    help: 'Jobs this agent is running',
    registers: [registry],
    collect() {
      this.set(sources.jobs().running);
    },
  });
  new Gauge({
    name: 'freeloader_agent_job_reports_pending',
    help: 'Final job reports kept on disk until the manager takes them',
    registers: [registry],
    collect() {
      this.set(sources.jobs().reportsPending);
    },
  });
  new Gauge({
    name: 'freeloader_agent_store_bytes',
    help: "The store's donated quota and the bytes it uses",
    labelNames: ['kind'] as const,
    registers: [registry],
    collect() {
      const u = sources.usage();
      this.set({ kind: 'quota' }, u.quotaBytes);
      this.set({ kind: 'used' }, u.usedBytes);
    },
  });

  app.addHook('onResponse', async (req, reply) => {
    const route = req.routeOptions.url ?? 'unmatched';
    requests.inc({ method: req.method, route, status: String(reply.statusCode) });
    latency.observe({ method: req.method, route }, reply.elapsedTime / 1000);
  });
  app.get('/metrics', async (_req, reply) => {
    reply.header('content-type', registry.contentType);
    return registry.metrics();
  });
  return registry;
}
