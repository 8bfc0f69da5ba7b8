import { type Agent, fetch as undiciFetch } from 'undici';
import { backoffDelay } from './backoff.js';
import { managerDispatcher, tlsFailure } from './manager-tls.js';
import {
  FreeLoaderError,
  type EnrollRequest,
  type EnrollResponse,
  type Heartbeat,
  type HeartbeatResponse,
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
 */
export class ManagerClient {
  readonly baseUrl: string;
  private dispatcher: Agent;
  private ca: string | undefined;

  constructor(
    baseUrl: string,
    private credentials: Credentials = { kind: 'none' },
    transport: ManagerTransport = {},
  ) {
    this.baseUrl = normalizeManagerUrl(baseUrl);
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

  private outages: OutagePolicy | undefined;
  private inOutage = false;

  setCredentials(credentials: Credentials): void {
    this.credentials = credentials;
  }

  /** Ride out manager outages on reads from now on (see {@link OutagePolicy}). */
  rideOutOutages(policy: OutagePolicy): void {
    this.outages = policy;
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    const policy = method === 'GET' ? this.outages : undefined;
    if (!policy) return this.requestOnce<T>(method, path, body);
    const giveUpAt = performance.now() + policy.patienceMs;
    for (let attempt = 0; ; attempt++) {
      try {
        const result = await this.requestOnce<T>(method, path, body);
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

  private async requestOnce<T>(method: string, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
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
        signal: AbortSignal.timeout(MANAGER_CALL_TIMEOUT_MS),
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

/** Accept `host:port`, `http://host:port/` and the like; return `http(s)://host:port`. */
export function normalizeManagerUrl(text: string): string {
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
