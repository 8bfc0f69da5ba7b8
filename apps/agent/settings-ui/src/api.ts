import type {
  EnrollLocal,
  LocalState,
  PauseRequest,
  SettingsPatch,
} from '../../src/control-api/local-api.js';

export type { LocalState, SettingsPatch };

const TOKEN_KEY = 'freeloader-settings-token';

/**
 * The local token: from the URL fragment the agent printed (`#token=…`, which browsers never
 * send to a server), then kept for this tab only and wiped from the address bar.
 */
export function takeToken(): string | null {
  const fromHash = new URLSearchParams(location.hash.slice(1)).get('token');
  if (fromHash) {
    sessionStorage.setItem(TOKEN_KEY, fromHash);
    history.replaceState(null, '', location.pathname + location.search);
    return fromHash;
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

export function saveToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token.trim());
}

/** An error the agent answered with, carrying its code. */
export class ApiError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

async function call<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = (await res.json().catch(() => ({}))) as {
    error?: { code: string; message: string };
  };
  if (!res.ok) {
    throw new ApiError(
      json.error?.code ?? 'ERROR',
      json.error?.message ?? res.statusText,
      res.status,
    );
  }
  return json as T;
}

/** The agent's settings API as the page uses it. */
export function api(token: string) {
  return {
    state: () => call<LocalState>(token, 'GET', 'api/state'),
    update: (patch: SettingsPatch) => call<LocalState>(token, 'PATCH', 'api/settings', patch),
    pause: (span: PauseRequest['span']) => call<LocalState>(token, 'POST', 'api/pause', { span }),
    resume: () => call<LocalState>(token, 'POST', 'api/resume'),
    enroll: (req: EnrollLocal) => call<LocalState>(token, 'POST', 'api/enroll', req),
    leave: () => call<LocalState>(token, 'POST', 'api/leave'),
  };
}
export type Api = ReturnType<typeof api>;
