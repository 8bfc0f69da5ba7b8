/**
 * One call to a listening manager's API over real HTTP: status and parsed JSON body (`{}` when
 * empty). For tests that act as several principals (`authorization` per call).
 *
 * @example const { status, json } = await apiCall(base, 'Bearer …', 'GET', '/cache');
 */
export async function apiCall<T = unknown>(
  base: string,
  authorization: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: T }> {
  const res = await fetch(`${base}/api/v1${path}`, {
    method,
    headers: {
      authorization,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: (text ? JSON.parse(text) : {}) as T };
}
