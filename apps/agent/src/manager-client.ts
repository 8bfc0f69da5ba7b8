import { type Agent, fetch as undiciFetch } from 'undici';
import { backoffDelay } from './backoff.js';
import { managerDispatcher, tlsFailure } from './manager-tls.js';
import {
  FreeLoaderError,
  JOB_WAIT_MS,
  type EnrollRequest,
  type EnrollResponse,
  type Heartbeat,
  type HeartbeatResponse,
  type JobWaitResponse,
} from '@freeloader/protocol';

/** How long one call to the manager may take before it counts as unreachable (milliseconds). */
const MANAGER_CALL_TIMEOUT_MS = 15_000;

/**
 * How a command rides out a manager outage (restart, database down): its reads (GET) are
 * retried with backoff while the manager is unreachable or answers UNAVAILABLE, for up to
 * `patienceMs`; `say` gets one line when an outage starts.
 */
export interface OutagePolicy {
  patienceMs: number;
  say(line: string): void;
}

/** Delay bounds between reads retried through an outage (milliseconds). */
const OUTAGE_RETRY_BASE_MS = 500;
const OUTAGE_RETRY_MAX_MS = 5_000;

/** Whether `e` says the manager is away (unreachable, restarting, its database down). */
export function isManagerAway(e: unknown): boolean {
  return e instanceof FreeLoaderError && e.code === 'UNAVAILABLE';
}

export type Credentials =
  | { kind: 'none' }
  | { kind: 'agent'; agentId: string; credential: string }
  | { kind: 'user'; token: string };

/** How the client reaches the manager (not who it is: that is {@link Credentials}). */
export interface ManagerTransport {
  /** The manager's CA (PEM), pinned at enrollment or login: trusted instead of the system's. */
  ca?: string;
}

/** Keep-alive connections to the manager, per client. */
const POOL = { keepAliveTimeout: 30_000, connections: 8 } as const;

/**
 * A thin, typed HTTP client for the manager's /api/v1. Every failure becomes a FreeLoaderError:
 * the manager's own code when it answered, UNAVAILABLE when it could not be reached.
 *
 * Several managers of one database may be given as a comma-separated list (`URL1,URL2`): a call
 * the manager in use cannot take (unreachable, or 503 UNAVAILABLE) is tried on the next one,
 * once round the list, and the client stays with the manager that answered.
 */
export class ManagerClient {
  /** Every manager URL given, normalized, in order. */
  readonly urls: readonly string[];
  private current = 0;
  private dispatcher: Agent;
  private ca: string | undefined;

  constructor(
    baseUrl: string,
    private credentials: Credentials = { kind: 'none' },
    transport: ManagerTransport = {},
  ) {
    this.urls = normalizeManagerUrl(baseUrl).split(',');
    this.ca = transport.ca;
    this.dispatcher = managerDispatcher(this.ca, POOL);
  }

  /** Trust only `ca` for the manager from now on (an enrollment just pinned it). */
  trustCa(ca: string): void {
    if (ca === this.ca) return;
    const old = this.dispatcher;
    this.ca = ca;
    this.dispatcher = managerDispatcher(ca, POOL);
    void old.close().catch(() => undefined);
  }

  /** The manager in use now (the one that last answered). */
  get baseUrl(): string {
    return this.urls[this.current]!;
  }

  /** The whole list as given to `--manager` (what an identity or a session remembers). */
  get managerUrls(): string {
    return this.urls.join(',');
  }

  private outages: OutagePolicy | undefined;
  private inOutage = false;

  setCredentials(credentials: Credentials): void {
    this.credentials = credentials;
  }

  /** Ride out manager outages on reads from now on (see {@link OutagePolicy}). */
  rideOutOutages(policy: OutagePolicy): void {
    this.outages = policy;
  }

  /** GET a binary answer (application/octet-stream), riding out outages as `request` does. */
  getBytes(path: string): Promise<Buffer> {
    return this.request<Buffer>('GET', path, undefined, 'bytes');
  }

  async request<T>(
    method: string,
    path: string,
    body?: unknown,
    as: 'json' | 'bytes' = 'json',
  ): Promise<T> {
    const policy = method === 'GET' ? this.outages : undefined;
    if (!policy) return this.requestAny<T>(method, path, body, as);
    const giveUpAt = performance.now() + policy.patienceMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.requestAny<T>(method, path, body, as);
        this.inOutage = false;
        return result;
      } catch (e) {
        if (!isManagerAway(e) || performance.now() > giveUpAt) throw e;
        if (!this.inOutage) {
          this.inOutage = true;
          policy.say(`manager unavailable (${(e as Error).message}); retrying until it is back`);
        }
        await new Promise((r) =>
          setTimeout(r, backoffDelay(attempt, OUTAGE_RETRY_BASE_MS, OUTAGE_RETRY_MAX_MS)),
        );
      }
    }
  }

  /**
   * One call, failed over round the manager list: on to the next manager when this one is
   * unreachable or answers 503. A call that may have reached a manager (cut mid-way, timed
   * out) is not repeated elsewhere unless it is a read: a write could be applied twice.
   */
  private async requestAny<T>(
    method: string,
    path: string,
    body: unknown,
    as: 'json' | 'bytes',
    timeoutMs = MANAGER_CALL_TIMEOUT_MS,
    cancel?: AbortSignal,
  ): Promise<T> {
    for (let tried = 1; ; tried++) {
      try {
        return await this.requestOnce<T>(method, path, body, as, timeoutMs, cancel);
      } catch (e) {
        if (tried >= this.urls.length || !mayFailOver(method, e)) throw e;
        this.current = (this.current + 1) % this.urls.length;
      }
    }
  }

  private async requestOnce<T>(
    method: string,
    path: string,
    body: unknown,
    as: 'json' | 'bytes',
    timeoutMs = MANAGER_CALL_TIMEOUT_MS,
    cancel?: AbortSignal,
  ): Promise<T> {
    const headers: Record<string, string> = {
      accept: as === 'bytes' ? 'application/octet-stream' : 'application/json',
    };
    if (body !== undefined) headers['content-type'] = 'application/json';
    const auth = authorization(this.credentials);
    if (auth) headers.authorization = auth;
    let res;
    try {
      res = await undiciFetch(`${this.baseUrl}/api/v1${path}`, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: this.dispatcher,
        signal: cancel
          ? AbortSignal.any([cancel, AbortSignal.timeout(timeoutMs)])
          : AbortSignal.timeout(timeoutMs),
      });
    } catch (e) {
      throw (
        tlsFailure(e, this.baseUrl) ??
        new FreeLoaderError(
          'UNAVAILABLE',
          `manager at ${this.baseUrl} is unreachable (${describeNetError(e)})`,
          undefined,
          e,
        )
      );
    }
    if (as === 'bytes' && res.ok) return Buffer.from(await res.arrayBuffer()) as T;
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text.length > 0 ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text for the error message
    }
    if (!res.ok) throw FreeLoaderError.fromResponse(res.status, parsed);
    return parsed as T;
  }

  enroll(req: EnrollRequest): Promise<EnrollResponse> {
    return this.request('POST', '/agents/enroll', req);
  }

  heartbeat(hb: Heartbeat): Promise<HeartbeatResponse> {
    return this.request('POST', '/agents/heartbeat', hb);
  }

  /**
   * The job channel: resolves when the manager says jobs wait for this agent (`jobsPending`) or
   * after about JOB_WAIT_MS with nothing new, with the cursor to send with the next wait (jobs
   * announced after it answer that wait at once). `check`: the manager looks in the jobs table
   * first (first wait, after the channel broke, and now and then). `signal` abandons the wait
   * (the agent stops).
   */
  async waitForJobs(
    opts: { check: boolean; cursor?: string },
    signal?: AbortSignal,
  ): Promise<JobWaitResponse> {
    const query = new URLSearchParams();
    if (opts.check) query.set('check', 'true');
    if (opts.cursor) query.set('cursor', opts.cursor);
    const qs = query.toString();
    return this.requestAny<JobWaitResponse>(
      'GET',
      `/jobs/wait${qs ? `?${qs}` : ''}`,
      undefined,
      'json',
      JOB_WAIT_MS + MANAGER_CALL_TIMEOUT_MS,
      signal,
    );
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

function authorization(c: Credentials): string | undefined {
  switch (c.kind) {
    case 'agent':
      return `Bearer agent.${c.agentId}.${c.credential}`;
    case 'user':
      return `Bearer ${c.token}`;
    default:
      return undefined;
  }
}

/** Connection errors that mean the request never reached the manager. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN']);

/** Whether a call that failed with `e` may be tried on another manager (see requestAny). */
function mayFailOver(method: string, e: unknown): boolean {
  if (!isManagerAway(e)) return false;
  const cause = (e as { cause?: unknown }).cause;
  // No cause: the manager answered 503 itself (restarting, its database away); nothing done.
  if (cause === undefined || method === 'GET' || method === 'HEAD') return true;
  const code = (cause as { cause?: { code?: string } }).cause?.code;
  return code !== undefined && NOT_SENT.has(code);
}

/**
 * Accept `host:port`, `http://host:port/` and the like; return `http(s)://host:port`. A
 * comma-separated list of managers comes back normalized the same way, item by item.
 *
 * @example normalizeManagerUrl('m1:7400, https://m2/') // 'http://m1:7400,https://m2'
 */
export function normalizeManagerUrl(text: string): string {
  if (text.includes(',')) {
    const items = text.split(',').map((t) => t.trim());
    if (items.some((t) => t === '')) {
      throw new FreeLoaderError('BAD_URI', `empty entry in the manager list "${text}"`);
    }
    return items.map(normalizeManagerUrl).join(',');
  }
  const withScheme = /^[a-z]+:\/\//i.test(text) ? text : `http://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    throw new FreeLoaderError('BAD_URI', `not a manager URL: "${text}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new FreeLoaderError('BAD_URI', `manager URL must be http(s): "${text}"`);
  }
  return `${url.protocol}//${url.host}`;
}

export function describeNetError(e: unknown): string {
  const err = e as { name?: string; message?: string; cause?: { code?: string; message?: string } };
  if (err?.name === 'TimeoutError') return 'timed out';
  return err?.cause?.code ?? err?.cause?.message ?? err?.message ?? String(e);
}
