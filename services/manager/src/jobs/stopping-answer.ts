import type { ServerResponse } from 'node:http';
import { FreeLoaderError } from '@freeloader/protocol';

/**
 * Seconds a client of a stopping manager is told to wait (Retry-After) before it tries this
 * manager again: about what a restart takes. An agent with several manager URLs does not wait:
 * a 503 to a GET makes its client try the next manager at once (apps/agent manager-client.ts).
 */
export const STOPPING_RETRY_AFTER_S = 2;

/**
 * Headers of the stopping answer, on the route and the fast path alike: when to try again, and
 * the connection closed after it (a kept-alive idle socket would hold the manager's close up to
 * its keep-alive timeout, 72 s).
 */
export const STOPPING_HEADERS: Readonly<Record<string, string>> = {
  'retry-after': String(STOPPING_RETRY_AFTER_S),
  connection: 'close',
};

/**
 * The error a held job channel wait is answered with when its manager stops: 503 UNAVAILABLE,
 * which agents treat as "manager away" (fail over, or reconnect with backoff), not "nothing new"
 * (which would send the next wait straight back to a manager that is going away).
 *
 * @example stoppingError().toBody() // { error: { code: 'UNAVAILABLE', message: 'the manager is stopping; …' } }
 */
export function stoppingError(): FreeLoaderError {
  return new FreeLoaderError(
    'UNAVAILABLE',
    'the manager is stopping; retry on another manager or after its restart',
  );
}

/** Answer `res` with {@link stoppingError} on the raw response (the job channel's fast path). */
export function sendStopping(res: ServerResponse): void {
  const payload = JSON.stringify(stoppingError().toBody());
  res.writeHead(503, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(payload),
    ...STOPPING_HEADERS,
  });
  res.end(payload);
}
