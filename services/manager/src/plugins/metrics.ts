import fp from 'fastify-plugin';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { EVENT_LOOP_SAMPLE_MS } from '@freeloader/protocol';
import { countDatasetsByState, countJobsByKindAndState } from '../repositories/metrics-counts.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** This app's Prometheus registry (one per app: tests build several in one process). */
    metrics: Registry;
    /** Count one answered request (what the onResponse hook does; the heartbeat fast path). */
    countResponse(method: string, route: string, status: number, seconds: number): void;
  }
}

/** Request latency buckets (seconds): a LAN API, from a millisecond to a slow import plan. */
const LATENCY_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

const HEARTBEAT_ROUTE = '/api/v1/agents/heartbeat';

/** The series one response counts in (children of the labelled metrics). */
interface RequestSeries {
  requests: { inc(): void };
  latency: { observe(v: number): void };
  heartbeat: { inc(): void } | undefined;
}

/**
 * `GET /metrics` in the Prometheus text format: requests and latencies per route, heartbeats,
 * jobs by kind and state, datasets (imports) by state, and the process's own figures. Job and
 * dataset counts are read from PostgreSQL at scrape time; while it cannot be reached they keep
 * their last values, so a scrape still answers.
 */
export default fp(
  async (app) => {
    const registry = new Registry();
    collectDefaultMetrics({
      register: registry,
      prefix: 'freeloader_manager_',
      eventLoopMonitoringPrecision: EVENT_LOOP_SAMPLE_MS,
    });
    const requests = new Counter({
      name: 'freeloader_http_requests_total',
      help: 'HTTP requests answered, by method, route pattern and status code',
      labelNames: ['method', 'route', 'status'] as const,
      registers: [registry],
    });
    const latency = new Histogram({
      name: 'freeloader_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method and route pattern',
      labelNames: ['method', 'route'] as const,
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
    const heartbeats = new Counter({
      name: 'freeloader_heartbeats_total',
      help: 'Agent heartbeats answered, by outcome (ok, or the error status)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    });
    new Gauge({
      name: 'freeloader_jobs',
      help: 'Jobs in the queue table by kind and state (finished ones until pruned)',
      labelNames: ['kind', 'state'] as const,
      registers: [registry],
      async collect() {
        const rows = await countJobsByKindAndState(app.pg).catch(() => null);
        if (!rows) return;
        this.reset();
        for (const r of rows) this.set({ kind: r.kind, state: r.state }, r.n);
      },
    });
    new Gauge({
      name: 'freeloader_datasets',
      help: 'Datasets by state (importing, ready, failed, deleting)',
      labelNames: ['state'] as const,
      registers: [registry],
      async collect() {
        const rows = await countDatasetsByState(app.pg).catch(() => null);
        if (!rows) return;
        this.reset();
        for (const r of rows) this.set({ state: r.state }, r.n);
      },
    });
    app.decorate('metrics', registry);

    // Each series' child looked up once: prom-client hashes a label object on every call
    // (5% of a heartbeat's manager CPU at 1,000 agents), and a callback hook spares the promise.
    const series = new Map<string, RequestSeries>();
    const seriesOf = (method: string, route: string, status: number): RequestSeries => {
      const key = `${status} ${method} ${route}`;
      let s = series.get(key);
      if (!s) {
        const code = String(status);
        s = {
          requests: requests.labels({ method, route, status: code }),
          latency: latency.labels({ method, route }),
          heartbeat:
            route === HEARTBEAT_ROUTE
              ? heartbeats.labels({ outcome: status === 200 ? 'ok' : code })
              : undefined,
        };
        series.set(key, s);
      }
      return s;
    };
    const countResponse = (method: string, route: string, status: number, seconds: number) => {
      const s = seriesOf(method, route, status);
      s.requests.inc();
      s.latency.observe(seconds);
      s.heartbeat?.inc();
    };
    app.decorate('countResponse', countResponse);
    app.addHook('onResponse', (req, reply, done) => {
      // The route pattern, not the URL: one series per route, not per dataset id.
      const route = req.routeOptions.url ?? 'unmatched';
      countResponse(req.method, route, reply.statusCode, reply.elapsedTime / 1000);
      done();
    });

    app.get('/metrics', { logLevel: 'warn', schema: { hide: true } }, async (_req, reply) => {
      reply.header('content-type', registry.contentType);
      return registry.metrics();
    });
  },
  { name: 'metrics', dependencies: ['postgres'] },
);
