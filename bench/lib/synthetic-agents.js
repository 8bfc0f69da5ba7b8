import { Client, Pool } from 'undici';
import { JOB_CHANNEL_CHECK_MS, JOB_WAIT_MS, MiB } from '../../packages/protocol/dist/index.js';
import { BeatWheel } from './beat-wheel.js';
import { timedRequest } from './timed-request.js';

/** Requests per kind whose latency is recorded (the job channel's wait is held on purpose). */
const TIMED = /** @type {const} */ (['heartbeat', 'claim', 'reconcile', 'enroll']);
/**
 * A heartbeat sent more than this after it was due is a late send (ms): the generator, not the
 * manager, fell behind. The same bound as the p99 target, so a saturated generator shows.
 */
export const LATE_SEND_MS = 50;
/** Retry delays after a failed heartbeat, as the agent's HeartbeatLoop backs off (ms). */
const RETRY_BASE_MS = 500;
const RETRY_MAX_MS = 30_000;
/** How long opening a connection to the manager may take (ms). */
const CONNECT_TIMEOUT_MS = 60_000;
/** How long an idle control connection is kept (ms): far below the manager's 72 s. */
const IDLE_CONTROL_MS = 30_000;
/** Tries of one enrollment before the run gives up (a refused token is not retried). */
const ENROLL_TRIES = 5;
/** Enrollments in flight at once: enough to keep the manager busy, not a thundering herd. */
const ENROLL_CONCURRENCY = 64;
/**
 * Agents per join token: enrollments that spend one token queue on its row lock (one commit
 * after the other), so the fleet spreads them over many tokens.
 */
const TOKEN_USES = 50;

/**
 * @typedef {object} SyntheticAgent
 * @property {string} id
 * @property {string} auth
 * @property {string} heartbeat the JSON body it sends every interval
 * @property {number} due performance.now() ms its next heartbeat is due
 * @property {number} failures heartbeats failed in a row (its backoff)
 * @property {boolean} resumed
 * @property {boolean} beaten its first heartbeat was answered
 * @property {Client} [channel] its own connection for the job channel, as a real agent has
 */

/**
 * Many agents in one process, sending what a real agent sends (apps/agent: daemon, heartbeat
 * loop, job runner, job channel): at start `GET /agents/me/datasets` (reconcile), a claim with
 * `resume`, then heartbeats as its HeartbeatLoop sends them — one at a time, the next one an
 * interval after the last answer (a fleet that sent on a fixed clock queued every heartbeat a
 * slow manager had not answered yet, and the backlog of its start-up burst never drained) —
 * and the job channel
 * (`GET /jobs/wait`, with `check` on the first and every JOB_CHANNEL_CHECK_MS) held open and
 * renewed, with a claim when it says jobs wait. Lean on purpose, since it shares the
 * cores with the manager it measures: one timer wheel for the whole fleet, one keep-alive connection
 * per agent for its held wait (an undici Client each: one Pool of 10,000 connections scans its
 * connections for a free one at every request and every answer, and at 10,000 agents the fleet
 * fell minutes behind with the manager 89% idle), a shared pool for the short requests (a real
 * agent has its own connections; the manager's cost per request is the same).
 */
export class SyntheticFleet {
  /** @param {{ url: string, log: (m: string) => void }} opts */
  constructor(opts) {
    this.url = opts.url;
    this.log = opts.log;
    this.intervalMs = 5_000;
    /** @type {SyntheticAgent[]} */
    this.agents = [];
    /** @type {BeatWheel<SyntheticAgent>} heartbeats by when they are due */
    this.wheel = new BeatWheel((a, due) => this.beat(a, due));
    this.stopped = false;
    // Wide: a real agent has its own connections, so requests the manager answers slowly (an
    // agent's first heartbeat writes its row) must not hold up everyone's behind them.
    this.control = new Pool(this.url, {
      connections: 512,
      keepAliveTimeout: 60_000,
      // A pool hands requests to its first free connections, so most of the 512 sit idle for
      // long. undici keeps an idle one until 1 s before the manager's advertised keep-alive
      // (72 s); a starved manager's event loop lags by seconds, closed such sockets as a
      // heartbeat was sent on them, and 1.3% of heartbeats failed with ECONNRESET (1,000
      // agents, load 33). Close idle ones well before the manager does.
      keepAliveMaxTimeout: IDLE_CONTROL_MS,
      // A manager starved of CPU (a busy shared machine) accepts slowly: wait, as agents do.
      connect: { timeout: CONNECT_TIMEOUT_MS },
    });
    /** Job channel waits in flight (each agent holds at most one). */
    this.waiting = 0;
    /** @type {Set<Client>} every agent's job channel connection (agents still starting too) */
    this.channelClients = new Set();
    this.resetStats();
  }

  resetStats() {
    /** @type {Record<string, number[]>} from written to the socket to the answer's end (ms) */
    this.latencies = Object.fromEntries(TIMED.map((k) => [k, []]));
    /** @type {number[]} heartbeats: from the call to written, the generator's own queue (ms) */
    this.queued = [];
    /** @type {number[]} heartbeats: from due to the call, how late the generator sent (ms) */
    this.lateness = [];
    /** @type {Record<string, number>} */
    this.counts = { heartbeat: 0, claim: 0, reconcile: 0, enroll: 0, wait: 0, woken: 0 };
    /** @type {Record<string, number>} */
    this.errors = {};
    /** @type {string[]} */
    this.errorSamples = [];
  }

  /**
   * One request; its latency recorded under `kind` when timed. Throws on a non-2xx answer.
   *
   * @param {Pool | Client} pool @param {string} kind @param {string} method @param {string} path
   * @param {string} auth @param {string} [body]
   * @returns {Promise<any>}
   */
  async call(pool, kind, method, path, auth, body) {
    try {
      const res = await timedRequest(pool, {
        method: /** @type {import('undici').Dispatcher.HttpMethod} */ (method),
        path: `/api/v1${path}`,
        headers: {
          accept: 'application/json',
          ...(auth ? { authorization: auth } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        body,
      });
      const text = res.text;
      if (res.statusCode >= 300) throw new Error(`${res.statusCode} ${text.slice(0, 200)}`);
      const lat = this.latencies[kind];
      if (lat) lat.push(res.doneAt - res.sentAt);
      if (kind === 'heartbeat') this.queued.push(res.sentAt - res.calledAt);
      this.counts[kind] = (this.counts[kind] ?? 0) + 1;
      return text ? JSON.parse(text) : undefined;
    } catch (e) {
      this.errors[kind] = (this.errors[kind] ?? 0) + 1;
      if (this.errorSamples.length < 5) this.errorSamples.push(`${kind}: ${String(e)}`);
      throw e;
    }
  }

  /**
   * Enroll `n` more agents (join tokens of up to TOKEN_USES uses, ENROLL_CONCURRENCY at once).
   *
   * @param {number} n @param {string} adminAuth
   * @returns {Promise<SyntheticAgent[]>}
   */
  async enroll(n, adminAuth) {
    const added = /** @type {SyntheticAgent[]} */ ([]);
    let next = 0;
    /** @type {string[]} */
    const tokens = [];
    // Equal shares, so that `i % tokens` spends each token at most TOKEN_USES times (plus room
    // for retries of enrollments that went through although their answer was lost).
    const count = Math.ceil(n / TOKEN_USES);
    for (let k = 0; k < count; k++) {
      const uses = Math.ceil((n - k) / count);
      const t = await this.call(
        this.control,
        'token',
        'POST',
        '/tokens',
        adminAuth,
        JSON.stringify({ maxUses: uses + ENROLL_TRIES }),
      );
      tokens.push(t.token);
    }
    const base = this.agents.length;
    const worker = async () => {
      while (next < n) {
        const i = next++;
        const name = `synthetic-${base + i}`;
        const url = `http://10.${(base + i) >> 16}.${((base + i) >> 8) & 255}.${(base + i) & 255}:7400`;
        const res = await this.enrollOne(
          JSON.stringify({
            // Neighbours in flight spend different tokens.
            token: tokens[i % tokens.length],
            name,
            url,
            quotaBytes: 64 * MiB,
          }),
        );
        this.intervalMs = res.heartbeatIntervalMs;
        added.push({
          id: res.agentId,
          auth: `Bearer agent.${res.agentId}.${res.credential}`,
          heartbeat: JSON.stringify(heartbeatBody(url)),
          due: 0,
          failures: 0,
          beaten: false,
          resumed: false,
        });
      }
    };
    await Promise.all(Array.from({ length: ENROLL_CONCURRENCY }, worker));
    return added;
  }

  /**
   * One enrollment, retried with backoff while the manager cannot be reached or answers 503
   * (as an agent's own enrollment would be retried by its operator).
   *
   * @param {string} body
   */
  async enrollOne(body) {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.call(this.control, 'enroll', 'POST', '/agents/enroll', '', body);
      } catch (e) {
        if (attempt >= ENROLL_TRIES || /^4\d\d /.test(String(/** @type {Error} */ (e).message)))
          throw e;
        await new Promise((r) => setTimeout(r, 1_000 * attempt));
      }
    }
  }

  /**
   * Start agents as a real one starts (reconcile, resume claim, job channel), then their
   * heartbeats.
   *
   * @param {SyntheticAgent[]} agents
   */
  async start(agents) {
    this.wheel.start();
    let next = 0;
    const worker = async () => {
      while (next < agents.length) {
        const a = /** @type {SyntheticAgent} */ (agents[next++]);
        await this.call(this.control, 'reconcile', 'GET', '/agents/me/datasets', a.auth).catch(
          () => undefined,
        );
        await this.claim(a);
        void this.holdChannel(a);
      }
    };
    await Promise.all(Array.from({ length: ENROLL_CONCURRENCY }, worker));
    // Then their first heartbeats, spread evenly over one interval from now.
    const now = performance.now();
    agents.forEach((a, i) => this.wheel.add(a, now + (i / agents.length) * this.intervalMs));
    this.agents.push(...agents);
  }

  /**
   * Hold heartbeats (the job channels stay open): the manager's cost of idle channels alone is
   * measured so. Keep a pause well under the manager's stale window.
   */
  pause() {
    this.wheel.pause();
  }

  /** Send heartbeats again, each one as late as the pause was long (no burst of overdue ones). */
  resume() {
    this.wheel.resume(this.intervalMs);
  }

  /**
   * One agent's heartbeat, due now; its next one is due an interval after the answer, or after
   * a backoff when it failed (as HeartbeatLoop does).
   *
   * @param {SyntheticAgent} a @param {number} due
   */
  beat(a, due) {
    this.lateness.push(performance.now() - due);
    void this.call(
      this.control,
      'heartbeat',
      'POST',
      '/agents/heartbeat',
      a.auth,
      a.heartbeat,
    ).then(
      () => {
        a.beaten = true;
        a.failures = 0;
        this.wheel.add(a, performance.now() + this.intervalMs);
      },
      () => {
        const ceiling = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(a.failures++, 30));
        const delay = Math.max(RETRY_BASE_MS / 2, ceiling * Math.random());
        this.wheel.add(a, performance.now() + delay);
      },
    );
  }

  /** @param {SyntheticAgent} a */
  async claim(a) {
    const body = JSON.stringify({
      kinds: ['import', 'delete', 'relocate', 'repair'],
      max: 2,
      ...(a.resumed ? {} : { resume: true }),
    });
    await this.call(this.control, 'claim', 'POST', '/jobs/claim', a.auth, body).then(
      () => {
        a.resumed = true;
      },
      () => undefined,
    );
  }

  /** The agent's job channel: held, renewed, a claim when it says jobs wait. @param {SyntheticAgent} a */
  async holdChannel(a) {
    let checkedAt = -Infinity;
    let failures = 0;
    /** @type {string | undefined} the last answer's cursor, sent back as the agent does */
    let cursor;
    const channel = (a.channel ??= new Client(this.url, {
      keepAliveTimeout: JOB_WAIT_MS * 2,
      headersTimeout: JOB_WAIT_MS + 15_000,
      connect: { timeout: CONNECT_TIMEOUT_MS },
    }));
    this.channelClients.add(channel);
    while (!this.stopped) {
      const startedAt = performance.now();
      const check = startedAt - checkedAt >= JOB_CHANNEL_CHECK_MS;
      try {
        const query = new URLSearchParams();
        if (check) query.set('check', 'true');
        if (cursor) query.set('cursor', cursor);
        this.waiting++;
        const res = await this.call(
          channel,
          'wait',
          'GET',
          `/jobs/wait?${query.toString()}`,
          a.auth,
        ).finally(() => this.waiting--);
        cursor = res.cursor;
        if (check) checkedAt = startedAt;
        failures = 0;
        if (res.jobsPending) {
          this.counts.woken = (this.counts.woken ?? 0) + 1;
          await this.claim(a);
        }
      } catch {
        if (this.stopped) return;
        checkedAt = -Infinity;
        await new Promise((r) =>
          setTimeout(r, Math.min(15_000, 500 * 2 ** failures++) * Math.random()),
        );
      }
    }
  }

  /** Agents whose first heartbeat was answered (their first one writes their row). */
  get beaten() {
    return this.agents.reduce((n, a) => n + (a.beaten ? 1 : 0), 0);
  }

  /** Agents holding a wait right now, as the fleet's connections see it. */
  get openChannels() {
    return this.waiting;
  }

  async stop() {
    this.stopped = true;
    this.wheel.stop();
    await Promise.all([
      this.control.destroy(),
      ...[...this.channelClients].map((c) => c.destroy()),
    ]);
  }
}

/**
 * A heartbeat as a real idle donor sends it (apps/agent heartbeatBody: usage, governor fields,
 * its URL, the join-time probe).
 *
 * @param {string} url
 * @example heartbeatBody('http://10.0.0.1:7400').throttle === 'idle'
 */
export function heartbeatBody(url) {
  return {
    quotaBytes: 64 * MiB,
    usedBytes: 0,
    freeBytes: 64 * MiB,
    servingRate: 0,
    throttle: 'idle',
    throttleReasons: ['owner away'],
    cpuLoad: 0.05,
    url,
    diagnostics: {
      diskReadRate: 500e6,
      downloadRate: 100e6,
      uploadRate: 50e6,
      measuredAt: '2026-11-27T00:00:00.000Z',
    },
  };
}
