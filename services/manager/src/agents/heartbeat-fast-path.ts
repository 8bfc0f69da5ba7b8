import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import { Readable } from 'node:stream';
import fp from 'fastify-plugin';
import { MAX_JSON_BODY, type Heartbeat } from '@freeloader/protocol';
import { agentOfHeader } from '../auth/guards.js';
import { sendStopping } from '../jobs/stopping-answer.js';

/** The route the fast path answers (the same one Fastify serves). */
export const HEARTBEAT_PATH = '/api/v1/agents/heartbeat';

/** The job channel route, answered ahead of Fastify when its cursor can be judged in memory. */
export const JOB_WAIT_PATH = '/api/v1/jobs/wait';

/** A job channel wait carrying only a cursor of the JobWaiters shape (epoch.sequence). */
const WAIT_URL = /^\/api\/v1\/jobs\/wait\?cursor=([0-9a-f]{1,32}\.\d{1,15})$/;

/** JSON bodies the fast path parses itself; any other media type goes to Fastify. */
const JSON_TYPE = /^application\/json(;\s*charset=utf-8)?$/i;

/** Where a request read by the fast path but handed to Fastify keeps its body. */
const REPLAY = Symbol('heartbeat body to replay');

type Replayable = IncomingMessage & { [REPLAY]?: Buffer };
type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Whether a heartbeat needs nothing but memory (the common case): the same probe and URL as
 * the one before it, and no running job whose lease needs renewing. The heartbeat route writes
 * to the database in exactly the other cases.
 *
 * @example steadyHeartbeat(previous, { ...previous, cpuLoad: 0.4 }) // true
 */
export function steadyHeartbeat(before: Heartbeat | undefined, hb: Heartbeat): boolean {
  return (
    !hb.runningJobs?.length &&
    (!hb.url || hb.url === before?.url) &&
    (!hb.diagnostics || before?.diagnostics?.measuredAt === hb.diagnostics.measuredAt)
  );
}

declare module 'fastify' {
  interface FastifyInstance {
    /** The heartbeat route hands it its compiled body validator (see the plugin below). */
    heartbeatFastPath: {
      learn(validate: (body: unknown) => boolean): void;
      /** Heartbeats it answered itself (tests, profiles). */
      readonly answered: number;
    };
  }
}

/**
 * A steady heartbeat answered ahead of Fastify. Every agent sends one every 5 s; at 1,000 agents
 * Fastify's request pipeline (routing, hooks, child logger, promise chain, serializer) was most
 * of the manager's 0.5–0.6 ms of CPU per heartbeat. The fast path takes only what it can answer
 * exactly as the route would, from memory: `POST` of a JSON body with a Content-Length, a fresh
 * cached credential, a body the route's own validator accepts, no database write due (see
 * {@link steadyHeartbeat}); it records the sighting, answers the same JSON and counts the
 * response in the metrics. Anything else — including every error — goes to Fastify, a body
 * already read replayed through a preParsing hook, so answers and errors are the route's own.
 */
export default fp(
  async (app) => {
    let validate: ((body: unknown) => boolean) | undefined;
    let closing = false;
    let answered = 0;
    app.decorate('heartbeatFastPath', {
      learn: (fn: (body: unknown) => boolean) => {
        validate ??= fn;
      },
      get answered() {
        return answered;
      },
    });
    app.addHook('preParsing', (req, _reply, payload, done) => {
      const raw = req.raw as Replayable;
      const body = raw[REPLAY];
      if (body === undefined) return done(null, payload);
      raw[REPLAY] = undefined;
      const stream = Readable.from([body]) as Readable & { receivedEncodedLength?: number };
      stream.receivedEncodedLength = body.length;
      done(null, stream);
    });
    app.addHook('preClose', async () => {
      closing = true;
    });

    /** The agent id when it authenticates from memory alone; undefined otherwise. */
    const agentOf = (req: IncomingMessage): string | undefined => {
      const who = agentOfHeader(req.headers.authorization);
      return who && app.agentCredentials.verifyFresh(who.id, who.credential) ? who.id : undefined;
    };

    /** The agent id when the request is a heartbeat the fast path may take. */
    const admit = (req: IncomingMessage): string | undefined => {
      if (closing || !validate || req.method !== 'POST' || req.url !== HEARTBEAT_PATH) return;
      const h = req.headers;
      const length = Number(h['content-length']);
      if (!JSON_TYPE.test(h['content-type'] ?? '') || h['transfer-encoding'] !== undefined) return;
      if (h['content-encoding'] !== undefined || !(length > 0 && length <= MAX_JSON_BODY)) return;
      return agentOf(req);
    };

    /**
     * A job channel wait held here when its cursor is one of this run's (no `check`, no body):
     * what the route does after its database check, which such a cursor never needs. Each wait
     * through Fastify cost as much manager CPU as a heartbeat, one per agent every JOB_WAIT_MS.
     */
    const holdWait = (req: IncomingMessage, res: ServerResponse): boolean => {
      if (closing || req.method !== 'GET' || !req.url?.startsWith(JOB_WAIT_PATH)) return false;
      const cursor = WAIT_URL.exec(req.url)?.[1];
      const h = req.headers;
      if (!cursor || h['content-length'] !== undefined || h['transfer-encoding'] !== undefined) {
        return false;
      }
      const agentId = agentOf(req);
      if (!agentId || app.jobWaiters.since(agentId, cursor) === 'unknown') return false;
      const t0 = performance.now();
      // The agent hung up (it stopped, or its call timed out): stop holding its wait.
      const gone = new AbortController();
      const onClose = (): void => gone.abort();
      res.once('close', onClose);
      void app.jobWaiters.wait(agentId, cursor, app.config.jobWaitMs, gone.signal).then((a) => {
        res.off('close', onClose);
        if (res.destroyed) return;
        // Cut short by the manager stopping: the agent goes elsewhere (see stopping-answer.ts).
        if (app.jobWaiters.closed) sendStopping(res);
        else sendJson(res, JSON.stringify({ jobsPending: a.jobsPending, cursor: a.cursor }));
        app.countResponse('GET', JOB_WAIT_PATH, res.statusCode, (performance.now() - t0) / 1000);
      });
      return true;
    };

    /** Answer from memory; false when Fastify must (nothing was changed then). */
    const answer = (agentId: string, body: Buffer, res: ServerResponse, t0: number): boolean => {
      const text = body.toString('utf8');
      // What secure-json-parse (Fastify's JSON parser) would inspect goes to Fastify.
      if (text.includes('__proto__') || text.includes('constructor')) return false;
      let hb: Heartbeat;
      try {
        hb = JSON.parse(text) as Heartbeat;
      } catch {
        return false;
      }
      if (!validate!(hb)) return false;
      const policy = app.sourcePolicy.peek();
      if (!policy || !steadyHeartbeat(app.softState.heartbeatOf(agentId), hb)) return false;
      app.softState.record(agentId, hb);
      const payload = JSON.stringify({
        heartbeatIntervalMs: app.config.heartbeatIntervalMs,
        sourceAllow: policy.entries(),
      });
      sendJson(res, payload);
      answered++;
      app.countResponse('POST', HEARTBEAT_PATH, 200, (performance.now() - t0) / 1000);
      return true;
    };

    app.addHook('onReady', async () => {
      const server = app.server;
      const fastify = server.listeners('request') as Listener[];
      const toFastify = (req: IncomingMessage, res: ServerResponse): void => {
        for (const l of fastify) l.call(server, req, res);
      };
      server.removeAllListeners('request');
      server.on('request', (req: Replayable, res: ServerResponse) => {
        if (holdWait(req, res)) return;
        const agentId = admit(req);
        if (agentId === undefined) return toFastify(req, res);
        const t0 = performance.now();
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.once('error', () => res.destroy());
        req.once('end', () => {
          const body = Buffer.concat(chunks);
          let done = false;
          try {
            done = answer(agentId, body, res, t0);
          } catch (err) {
            app.log.error({ err }, 'heartbeat fast path failed; answered by the route');
          }
          if (done) return;
          req[REPLAY] = body;
          toFastify(req, res);
        });
      });
    });
  },
  {
    name: 'heartbeat-fast-path',
    dependencies: ['metrics', 'agent-credentials', 'soft-state', 'job-channel'],
  },
);

/** 200 with a JSON text, as Fastify sends it. */
function sendJson(res: ServerResponse, payload: string): void {
  res.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
  });
  res.end(payload);
}
