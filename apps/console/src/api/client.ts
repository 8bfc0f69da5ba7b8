import { CSRF_HEADER } from '@fl-protocol/schemas/console';

/** An error the manager answered (its ErrorBody), or a network failure (`status` 0). */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly details: Record<string, unknown> | undefined;

  constructor(status: number, code: string, message: string, details?: Record<string, unknown>) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
  }
}

/** True when the error means "not signed in" (so the console shows the sign-in page). */
export const isUnauthenticated = (e: unknown): boolean => e instanceof ApiError && e.status === 401;

const UNSAFE = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/**
 * Call the manager's `/api/v1`. The session travels as the httpOnly `fl_session` cookie; unsafe
 * methods add the CSRF header the manager requires of cookie sessions. Non-2xx answers throw an
 * {@link ApiError} carrying the manager's code and message.
 *
 * @example const me = await api<UserView>('GET', '/auth/me');
 */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (UNSAFE.has(method)) headers[CSRF_HEADER] = '1';
  let res: Response;
  try {
    res = await fetch(`/api/v1${path}`, {
      method,
      headers,
      credentials: 'same-origin',
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (e) {
    throw new ApiError(0, 'UNAVAILABLE', `the manager is unreachable (${(e as Error).message})`);
  }
  const text = await res.text();
  let json: unknown = undefined;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    // Not JSON (a proxy's error page): reported below by status.
  }
  if (!res.ok) {
    const err = (
      json as { error?: { code?: string; message?: string; details?: Record<string, unknown> } }
    )?.error;
    throw new ApiError(
      res.status,
      err?.code ?? `HTTP_${res.status}`,
      err?.message ?? `the manager answered HTTP ${res.status}`,
      err?.details,
    );
  }
  return json as T;
}
